"""The runner probes the CPU's FMA issue rate before it takes any run, once per CPU and kernel build: the figures
go into the inventory it registers with (the dashboard's peak for a CPU its tables do not know is inferred from
them), and a restart reads them from its state directory instead of spending seconds of a core again. A probe
disturbed by other work is kept marked so (no FMA units where it was disturbed) and taken again later; a quiet one
replaces it. HOSTBENCH_FMA_PROBE=0 turns it off. The runner's background probe: test_background_probe.py."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from hostbench_runner.config import load as load_settings
from hostbench_runner.inventory import collect, fma_probe, probe_isas

# A stand-in for `hbk cpu`: --describe offers avx2 and sse2; a run prints the start and result lines the probe
# reads (AVX2: 16 FP64 FLOP/cycle at 3 GHz = 2 FMA units) and appends its ISA to calls.log.
FAKE = r'''#!/usr/bin/env python3
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
if "--describe" in args:
    print(json.dumps({"parameters": {"properties": {"isa": {"enum": ["auto", "avx2", "sse2", "scalar"]}}}}))
    sys.exit(0)
isa = args[args.index("--isa") + 1]
with open(os.path.join(here, "calls.log"), "a") as f:
    f.write(isa + "\n")
share = float(open(os.path.join(here, "share")).read()) if os.path.exists(os.path.join(here, "share")) else 1.0
flop = {"avx2": 16.0, "sse2": 4.0}[isa]
print(json.dumps({"type": "start", "clock_ghz": 3.0, "fma": isa == "avx2"}))
print(json.dumps({"type": "result", "value": flop * 3.0 * share, "verified": True, "cpu_share": share}))
'''


READ_BUSY = fma_probe.machine_busy_s


@pytest.fixture(autouse=True)
def quiet_neighbours(monkeypatch):
    """These tests judge the probe's logic with a fake kernel while other suites may keep this machine's other CPU
    busy: the machine's busy time is the fake's own unless a test says otherwise."""
    monkeypatch.setattr(fma_probe, "machine_busy_s", lambda: fma_probe._children_cpu_s())


def _fake(tmp_path: Path) -> Path:
    kbin = tmp_path / "hbk"
    kbin.write_text(FAKE)
    kbin.chmod(kbin.stat().st_mode | stat.S_IXUSR)
    return kbin


def _calls(kbin: Path) -> list[str]:
    log = kbin.parent / "calls.log"
    return log.read_text().split() if log.exists() else []


CPU = {"vendor": "GenuineIntel", "model": "Unknown CPU", "family": 6, "model_number": 999, "flags": ["avx2", "sse2"]}


def test_the_probe_runs_once_and_a_restart_reads_it_back(tmp_path):
    kbin = _fake(tmp_path)
    cache = tmp_path / "state" / "fma-probe.json"
    cache.parent.mkdir()
    key = fma_probe.cache_key(CPU, {"version": "1"})
    first = fma_probe.cached_run(kbin, ["avx2", "sse2"], cache, key)
    assert first is not None and first["isa"]["avx2"]["fma_units"] == 2 and first["isa"]["avx2"]["flop_per_cycle"] == 16
    assert _calls(kbin) == ["avx2", "sse2"]
    again = fma_probe.cached_run(kbin, ["avx2", "sse2"], cache, key)
    assert again == first and _calls(kbin) == ["avx2", "sse2"]  # read back: the kernel was not run again
    # another kernel build (or CPU) is probed afresh
    fma_probe.cached_run(kbin, ["avx2", "sse2"], cache, fma_probe.cache_key(CPU, {"version": "2"}))
    assert _calls(kbin) == ["avx2", "sse2"] * 2


def test_a_disturbed_probe_is_kept_marked_and_tried_again_and_a_quiet_one_replaces_it(tmp_path):
    kbin = _fake(tmp_path)
    (tmp_path / "share").write_text("0.5")  # half the CPU went to someone else: FMA units cannot be told
    cache = tmp_path / "fma-probe.json"
    probe = fma_probe.cached_run(kbin, ["avx2"], cache, "k")
    assert probe is not None and probe["isa"]["avx2"]["fma_units"] is None
    kept = json.loads(cache.read_text())
    assert kept["disturbed"] is True and kept["probe"]["isa"]["avx2"]["fma_units"] is None  # marked as it was
    assert fma_probe.read_cache(cache, "k") == probe
    fma_probe.cached_run(kbin, ["avx2"], cache, "k")
    assert _calls(kbin).count("avx2") == 2 * fma_probe.TRIES  # tried again (three tries each time)
    (tmp_path / "share").write_text("1.0")
    quiet = fma_probe.cached_run(kbin, ["avx2"], cache, "k")
    assert quiet is not None and quiet["isa"]["avx2"]["fma_units"] == 2
    assert json.loads(cache.read_text())["disturbed"] is False
    # a disturbed probe never replaces a quiet one
    (tmp_path / "share").write_text("0.5")
    assert fma_probe.keep(cache, "k", fma_probe.run(kbin, ["avx2"])) is False
    assert fma_probe.read_cache(cache, "k") == quiet


def test_a_probe_whose_neighbours_were_busy_says_nothing_about_the_units(tmp_path, monkeypatch):
    """An SMT sibling shares the core's FMA units while the probe keeps its whole CPU share: a 2-vCPU Zen 3 guest
    measured 1 unit of its 2 with the other vCPU busy. Busy neighbours make a try disturbed: no units, not kept."""
    kbin = _fake(tmp_path)
    ticks = iter(range(0, 10_000, 1))  # the machine gains 1 busy CPU-second per reading: other CPUs always busy
    monkeypatch.setattr(fma_probe, "machine_busy_s", lambda: float(next(ticks)) * 1000)
    cache = tmp_path / "fma-probe.json"
    probe = fma_probe.cached_run(kbin, ["avx2"], cache, "k")
    assert probe is not None
    fig = probe["isa"]["avx2"]
    assert fig["fma_units"] is None and fig["neighbours_busy"] == 1.0 and fig["cpu_share"] == 1.0
    assert json.loads(cache.read_text())["disturbed"] is True and _calls(kbin).count("avx2") == fma_probe.TRIES


def test_the_neighbours_busy_fraction():
    # 2 CPUs, 1 s: the machine was busy 1.9 CPU-s of which 1.0 was the probe's -> the other CPU 90 % busy
    assert fma_probe.neighbours_busy(10.0, 11.9, 1.0, 1.0, 2) == 0.9
    assert fma_probe.neighbours_busy(10.0, 11.0, 1.0, 1.0, 2) == 0.0
    assert fma_probe.neighbours_busy(10.0, 12.0, 1.0, 0.5, 3) == 1.0  # capped
    assert fma_probe.neighbours_busy(10.0, 10.5, 1.0, 1.0, 2) == 0.0  # tick rounding: never below 0
    assert fma_probe.neighbours_busy(10.0, 12.0, 1.0, 1.0, 1) == 0.0  # one CPU: no neighbour
    assert fma_probe.neighbours_busy(None, 12.0, 1.0, 1.0, 2) is None


def test_the_machine_busy_reader_reads_proc_stat():
    first = READ_BUSY()  # the real reader (the fixture replaces the module's for the other tests)
    assert first is not None and first > 0
    sum(i * i for i in range(3_000_000))  # CPU time of our own, counted in the machine's
    assert READ_BUSY() > first  # type: ignore[operator]


def test_the_inventory_carries_the_probe_only_when_asked(tmp_path):
    kbin = _fake(tmp_path)
    with_probe = collect("/", kernel_bin=kbin, probe_cache=tmp_path / "fma-probe.json")
    without = collect("/")
    cpu = with_probe["cpu"]
    assert "error" not in cpu, cpu
    wanted = [isa for isa in probe_isas(cpu) if isa in ("avx2", "sse2")]  # what this CPU and the fake both have
    probe = cpu.get("fma_probe")
    if wanted:
        assert probe is not None and sorted(probe["isa"]) == sorted(wanted), probe
    else:  # an ARM host: the fake kernel offers none of its ISAs
        assert probe is None
    assert "fma_probe" not in (without.get("cpu") or {})


def test_the_setting_follows_the_environment():
    assert load_settings([], {"HOSTBENCH_SERVER": "http://127.0.0.1:1"}).fma_probe is True
    assert load_settings([], {"HOSTBENCH_SERVER": "http://127.0.0.1:1", "HOSTBENCH_FMA_PROBE": "0"}).fma_probe is False
    assert json.dumps(fma_probe.cache_key(CPU, None))  # a key without a kernel build is still a key


def test_a_runner_killed_while_it_probes_leaves_no_kernel_behind(tmp_path):
    """Found in this suite: a runner killed during its probe left a hung fake kernel running for good. The probe's
    kernel dies with the process that started it (PR_SET_PDEATHSIG, as the runner's kernels and tools do)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    hang = tmp_path / "hbk-hang"
    hang.write_text("#!/usr/bin/env python3\nimport sys, time\n"
                    "if '--describe' in sys.argv:\n"
                    "    print('{\"parameters\": {\"properties\": {\"isa\": {\"enum\": [\"avx2\"]}}}}'); sys.exit(0)\n"
                    "time.sleep(600)\n")
    hang.chmod(0o755)
    code = f"from hostbench_runner.inventory import fma_probe; fma_probe.run({str(hang)!r}, ['avx2'], timeout_s=600)"
    proc = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 20
    kids: list[int] = []
    while not kids and time.monotonic() < deadline:
        time.sleep(0.1)
        kids = [int(p) for p in os.listdir("/proc") if p.isdigit() and str(hang) in _cmdline(p)
                and "--isa" in _cmdline(p)]
    assert kids, "the probe never started its kernel"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(k) for k in kids):
        time.sleep(0.1)
    assert not any(_alive(k) for k in kids), kids


def _cmdline(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_the_probe_divides_by_the_clock_timed_under_its_own_vector_load():
    """An Intel core under heavy AVX-512 work runs below its scalar clock: FLOP/cycle against the scalar clock
    read 1.39 FMA units on this (synthetic) core that has 2; against the vector-loaded clock, 1.79 -> 2."""
    start = {"type": "start", "clock_ghz": 4.5, "clock_vector_ghz": 3.5, "fma": True}
    result = {"type": "result", "value": 100.0, "cpu_share": 1.0, "verified": True,
              "clock_after_ghz": 4.4, "clock_after_vector_ghz": 3.4}
    got = fma_probe.parse("avx512", "\n".join(json.dumps(e) for e in (start, result)))
    assert got is not None and got["clock_ghz"] == 3.5 and got["fma_units"] == 2
    assert got["flop_per_cycle"] == round(100.0 / 3.5, 2)
    # a kernel from before the vector-loaded clock: the scalar chain's, and the rounding says 1
    for e in (start, result):
        for k in ("clock_vector_ghz", "clock_after_vector_ghz"):
            e.pop(k, None)
    old = fma_probe.parse("avx512", "\n".join(json.dumps(e) for e in (start, result)))
    assert old is not None and old["clock_ghz"] == 4.5 and old["fma_units"] == 1
