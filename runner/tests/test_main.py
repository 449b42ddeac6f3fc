"""`python -m hostbench_runner` as a real process: registration, credential reuse, signals, revocation,
and kill -9 of the runner in the middle of a run (the kernel dies with it; the backlog goes up later)."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runner_fakes import FakeServer, kernel_calls, pids_alive

from hostbench_runner.config import DEFAULT_KERNEL_BIN, load
from hostbench_runner.daemon import RESTARTED_REASON
from hostbench_runner.errors import ConfigError


def start_runner(server, tmp_path: Path, kernel_bin: Path, token: str | None = FakeServer.registration_token,
                 log_name: str = "runner.log") -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOSTBENCH_")}
    env.update(HOSTBENCH_SERVER=server.url, HOSTBENCH_RUNNER_STATE=str(tmp_path / "state"),
               HOSTBENCH_KERNEL_BIN=str(kernel_bin), HOSTBENCH_RUNNER_NAME="proc-runner",
               HOSTBENCH_RUNNER_LABELS="provider=aws,instance_type=c7a.large,region=eu-west-1")
    if token:
        env["HOSTBENCH_REGISTRATION_TOKEN"] = token
    log = open(tmp_path / log_name, "ab")
    return subprocess.Popen([sys.executable, "-m", "hostbench_runner"], env=env, stdout=log, stderr=log,
                            stdin=subprocess.DEVNULL)


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout_s: float = 10) -> int:
    proc.send_signal(sig)
    return proc.wait(timeout_s)


def test_first_start_registers_then_reuses_the_credential(server, tmp_path, fake_kernel):
    kbin = fake_kernel("ok")
    proc = start_runner(server, tmp_path, kbin)
    try:
        assert server.wait_for(lambda: server.heartbeats), (tmp_path / "runner.log").read_text()
        assert server.wait_for(lambda: any(p == "/api/runner/work" for _, p, _ in server.requests))
        started = time.monotonic()
        assert stop(proc) == 0
        assert time.monotonic() - started < 15  # a pending 20 s long poll does not delay shutdown
    finally:
        proc.kill()
    reg = server.registrations[0]
    assert reg["name"] == "proc-runner" and reg["registration_token"] == FakeServer.registration_token
    assert reg["labels"] == {"provider": "aws", "instance_type": "c7a.large", "region": "eu-west-1"}
    assert reg["inventory"]["cpu"]["threads"] >= 1 and reg["inventory"]["kernel"]["version"] == "fake-1.0"
    assert "inventory" in server.heartbeats[0] and server.heartbeats[0]["run"] is None

    cred_path = tmp_path / "state" / "credential.json"
    assert stat.S_IMODE(cred_path.stat().st_mode) == 0o600
    assert json.loads(cred_path.read_text()) == {"host_id": 7, "runner_token": FakeServer.runner_token}
    log = (tmp_path / "runner.log").read_text()
    assert FakeServer.runner_token not in log and FakeServer.registration_token not in log

    # second start: no registration token needed, no second registration
    proc = start_runner(server, tmp_path, kbin, token=None)
    try:
        n = len(server.heartbeats)
        assert server.wait_for(lambda: len(server.heartbeats) > n)
        assert stop(proc) == 0
    finally:
        proc.kill()
    assert len(server.registrations) == 1


def test_sigterm_during_a_run_reports_runner_stopped(server, tmp_path, fake_kernel):
    kbin = fake_kernel("slow")
    server.work.put({"run_id": 50, "attempt": 1, "experiment": "cpu_trace",
                     "params": {"op": "fp64", "threads": 1, "duration_s": 600}, "deadline_s": 700, "lease_s": 15})
    proc = start_runner(server, tmp_path, kbin)
    try:
        assert server.wait_for(lambda: len(server.samples.get(("50", 1), {})) >= 3), (tmp_path / "runner.log").read_text()
        assert stop(proc) == 0
    finally:
        proc.kill()
    finish = server.finishes[0][1]
    assert finish["status"] == "failed" and finish["reason"] == "runner stopped"
    seqs = server.seqs(50, 1)
    assert seqs == list(range(len(seqs)))  # no gap
    assert pids_alive([c["pid"] for c in kernel_calls(kbin)]) == []
    assert list((tmp_path / "state" / "spool").iterdir()) == []


def test_kill_9_mid_run_kills_the_kernel_and_the_next_start_uploads_the_backlog(server, tmp_path, fake_kernel):
    kbin = fake_kernel("slow")
    server.work.put({"run_id": 60, "attempt": 3, "experiment": "cpu",
                     "params": {"op": "fp64", "threads": [1], "repeats": 1, "duration_s": 60, "warmup_s": 0},
                     "deadline_s": 100, "lease_s": 15})
    proc = start_runner(server, tmp_path, kbin)
    try:
        assert server.wait_for(lambda: len(server.samples.get(("60", 3), {})) >= 2), (tmp_path / "runner.log").read_text()
        server.down = True  # what the runner measures from now on stays in its spool
        time.sleep(0.3)
        proc.kill()
        proc.wait(5)
    finally:
        proc.kill()
    kernel_pid = kernel_calls(kbin)[0]["pid"]
    deadline = time.monotonic() + 3
    while pids_alive([kernel_pid]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids_alive([kernel_pid]) == [], "the kernel outlived the runner (PR_SET_PDEATHSIG)"
    before = server.seqs(60, 3)

    server.down = False
    (tmp_path / "state" / "work" / "leftover.dat").write_bytes(b"x")
    proc = start_runner(server, tmp_path, kbin, token=None)
    try:
        assert server.wait_for(lambda: server.finishes), (tmp_path / "runner.log").read_text()
        assert stop(proc) == 0
    finally:
        proc.kill()
    after = server.seqs(60, 3)
    assert len(after) > len(before)  # samples spooled while the server was down arrived later
    assert after == list(range(len(after)))
    assert server.finishes[0] == ("60", {"attempt": 3, "status": "failed", "reason": RESTARTED_REASON,
                                         "results": [], "end": None})
    assert list((tmp_path / "state" / "work").iterdir()) == []
    assert list((tmp_path / "state" / "spool").iterdir()) == []


def test_revoked_credential_exits_non_zero(server, tmp_path, fake_kernel):
    server.revoked = True
    state = tmp_path / "state"
    state.mkdir()
    (state / "credential.json").write_text(json.dumps({"host_id": 7, "runner_token": FakeServer.runner_token}))
    (state / "credential.json").chmod(0o600)
    proc = start_runner(server, tmp_path, fake_kernel("ok"), token=None)
    try:
        assert proc.wait(10) == 3
    finally:
        proc.kill()
    log = (tmp_path / "runner.log").read_text()
    assert "revoked" in log and "credential.json" in log


def test_bad_registration_token_exits_non_zero(server, tmp_path, fake_kernel):
    proc = start_runner(server, tmp_path, fake_kernel("ok"), token="wrong")
    try:
        assert proc.wait(10) == 3
    finally:
        proc.kill()
    assert "registration token refused" in (tmp_path / "runner.log").read_text()
    assert not (tmp_path / "state" / "credential.json").exists()


def test_settings_from_env_and_arguments(tmp_path):
    env = {"HOSTBENCH_SERVER": "http://api:8000/", "HOSTBENCH_RUNNER_LABELS": "provider=aws, region=us-east-1",
           "HOSTBENCH_RUNNER_STATE": str(tmp_path), "HOSTBENCH_REGISTRATION_TOKEN": "t"}
    s = load([], env)
    assert s.server == "http://api:8000" and s.labels == {"provider": "aws", "region": "us-east-1"}
    assert s.state_dir == tmp_path and s.registration_token == "t" and s.kernel_bin == DEFAULT_KERNEL_BIN
    assert "registration_token" not in repr(s)
    s = load(["--server", "https://x", "--label", "instance_type=c7a.large", "--name", "n1",
              "--kernel-bin", "/opt/hbk"], env)
    assert s.server == "https://x" and s.labels == {"instance_type": "c7a.large"} and s.name == "n1"
    assert str(s.kernel_bin) == "/opt/hbk"
    assert DEFAULT_KERNEL_BIN.parts[-4:] == ("runner", "kernels", "build", "hbk")
    for bad_env in ({}, {"HOSTBENCH_SERVER": "ftp://x"}, {"HOSTBENCH_SERVER": "http://x", "HOSTBENCH_RUNNER_LABELS": "noequals"}):
        with pytest.raises(ConfigError):
            load([], bad_env)
