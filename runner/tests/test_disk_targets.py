"""Disk target directories (issue 15, part 3): the runner's owner names directories a disk job may put its test
file in (--disk-target NAME=PATH, HOSTBENCH_DISK_TARGETS); each is checked at start, advertised by name in the
inventory, and a job's target NAME maps to a fresh directory on it for the run, removed after. A name the runner
was not given is refused; a path never comes from the assignment."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest
from hostbench_common.experiments import RUNS
from runner_fakes import assignment, kernel_calls, run_once

from hostbench_runner import inventory
from hostbench_runner.config import SOURCE_KERNEL_BIN, load, parse_disk_targets
from hostbench_runner.errors import ConfigError
from hostbench_runner.inventory import disks

SERVER = {"HOSTBENCH_SERVER": "http://api:8000"}


def test_targets_from_the_environment_and_the_command_line(tmp_path):
    fast, slow = tmp_path / "fast", tmp_path / "slow"
    fast.mkdir()
    slow.mkdir()
    s = load([], {**SERVER, "HOSTBENCH_DISK_TARGETS": f"fast={fast}, slow={slow}"})
    assert s.disk_targets == {"fast": fast.resolve(), "slow": slow.resolve()}
    s = load(["--disk-target", f"nvme0={fast}"], {**SERVER, "HOSTBENCH_DISK_TARGETS": f"slow={slow}"})
    assert s.disk_targets == {"nvme0": fast.resolve()}  # the command line replaces the environment
    assert load([], SERVER).disk_targets == {}


def test_a_link_is_resolved_once_at_start(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert parse_disk_targets([f"x={tmp_path / 'link'}"]) == {"x": real.resolve()}


@pytest.mark.parametrize(("item", "why"), [
    ("fast", "expected NAME=PATH"),
    ("Fast={dir}", "expected NAME=PATH"),
    ("../x={dir}", "expected NAME=PATH"),
    ("work={dir}", "not 'work'"),
    ("fast=relative/dir", "not an absolute path"),
    ("fast={dir}/missing", "not an existing directory"),
    ("fast={dir}/file", "not an existing directory"),
    ("fast={dir}/with space", "characters not allowed"),
])
def test_a_bad_target_stops_the_runner_at_start_saying_why(tmp_path, item, why):
    (tmp_path / "file").write_text("x")
    (tmp_path / "with space").mkdir()
    with pytest.raises(ConfigError, match=why):
        parse_disk_targets([item.format(dir=tmp_path)])


def test_a_name_twice_and_a_directory_of_someone_else_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="given twice"):
        parse_disk_targets([f"a={tmp_path}", f"a={tmp_path}"])
    if os.geteuid() == 0:
        return  # root may write anywhere: the ownership check cannot refuse it
    with pytest.raises(ConfigError, match="neither owned by nor writable"):
        parse_disk_targets(["root=/proc/1"])


def test_the_inventory_advertises_each_target_by_name_with_its_filesystem_and_free_space(tmp_path):
    inv = inventory.run_collector(inventory.COLLECTORS[2], Path("/"), tmp_path, {"fast": tmp_path})
    [t] = inv["targets"]
    assert t["name"] == "fast" and isinstance(t["fstype"], str) and t["free_bytes"] > 0
    assert str(tmp_path) not in str(inv["targets"])  # the path stays on the host
    assert disks.parse(disks.read(Path("/"), tmp_path))["targets"] == []


def test_a_disk_run_on_a_target_uses_a_fresh_directory_there_and_removes_it(server, settings_for, tmp_path):
    if not SOURCE_KERNEL_BIN.is_file():
        pytest.fail("runner/kernels/build/hbk not built")
    fast = tmp_path / "fast"
    fast.mkdir()
    (fast / "hostbench-run-9-attempt-1").mkdir()  # left by a process killed mid-run
    (fast / "keep-me").write_text("not ours")
    settings = settings_for(server.url, SOURCE_KERNEL_BIN, disk_targets={"fast": fast})
    params = {"ops": ["seq_write"], "blocks": [4096], "file_size": 1048576, "threads": [1], "repeats": 1,
              "duration_s": 0.2, "warmup_s": 0, "target": "fast"}
    d, finish = run_once(server, settings, assignment(run_id=80, experiment="disk", params=params))
    assert finish["status"] == "succeeded", finish["reason"]
    assert server.starts[0][1]["kernel_info"]["params"]["workdir"] == str(fast / "hostbench-run-80-attempt-1")
    assert sorted(p.name for p in fast.iterdir()) == ["hostbench-run-9-attempt-1", "keep-me"]  # its own removed
    d.clean_work_dir()  # at start: an earlier process's run directories go, nothing else
    assert [p.name for p in fast.iterdir()] == ["keep-me"]


@pytest.mark.parametrize("target", ["slow", "/etc", "../fast", 7])
def test_a_target_the_runner_was_not_given_fails_the_run_before_any_kernel(server, settings_for, fake_kernel,
                                                                           tmp_path, target):
    fast = tmp_path / "fast"
    fast.mkdir()
    kbin = fake_kernel("ok")
    settings = settings_for(server.url, kbin, disk_targets={"fast": fast})
    _, finish = run_once(server, settings, assignment(run_id=81, experiment="disk", params={"target": target}))
    assert finish["status"] == "failed"
    assert "is not a disk target of this runner (it has: work, fast)" in finish["reason"]
    assert list(fast.iterdir()) == [] and kernel_calls(kbin) == []


def test_the_default_target_is_the_run_s_own_directory():
    assert "workdir" not in RUNS["disk"].kernel_params({"target": "work"})


def test_the_reference_tools_of_a_run_on_a_target_run_there_too(server, settings_for, tmp_path, monkeypatch):
    """fio writes its file in its own directory: on the target, so both figures are of the same filesystem."""
    if not SOURCE_KERNEL_BIN.is_file():
        pytest.fail("runner/kernels/build/hbk not built")
    from test_reference import FAKE_TOOL, calls

    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("fio", "iozone"):
        (bindir / name).write_text(f"#!{sys.executable}\n" + textwrap.dedent(FAKE_TOOL.format(
            name=name, mode="ok", log=str(bindir / "calls.jsonl"), fixture="")))
        (bindir / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    fast = tmp_path / "fast"
    fast.mkdir()
    params = {"ops": ["seq_write"], "blocks": [4096], "file_size": 1048576, "threads": [1], "repeats": 1,
              "duration_s": 0.2, "warmup_s": 0, "target": "fast", "reference": True}
    _, finish = run_once(server, settings_for(server.url, SOURCE_KERNEL_BIN, disk_targets={"fast": fast}),
                         assignment(run_id=82, experiment="disk", params=params))
    assert finish["status"] == "succeeded", finish["reason"]
    tool_calls = calls(bindir)
    assert tool_calls and all(c["cwd"].startswith(str(fast / "hostbench-run-82-attempt-1")) for c in tool_calls)
    assert list(fast.iterdir()) == []
