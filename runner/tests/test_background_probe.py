"""The runner's FMA probe never stands between it and its registration or heartbeats (issue 28): the inventory it
registers with carries the probe it kept (quiet, or disturbed and marked so), and a new probe is taken after it
started, while it takes no run, only where it can say more than the kept one."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from test_fma_probe_cache import _calls, _fake

from hostbench_runner.inventory import collect, fma_probe, probe_isas
from hostbench_runner.probing import BackgroundProbe


@pytest.fixture(autouse=True)
def quiet_neighbours(monkeypatch):
    """The fake kernel's tries are judged by its own CPU time (other suites may keep the other CPU busy)."""
    monkeypatch.setattr(fma_probe, "machine_busy_s", lambda: fma_probe._children_cpu_s())


def _inventory(tmp_path: Path, kbin: Path, cache: Path) -> dict:
    inv = collect("/", kernel_bin=kbin, probe_cache=cache, probe_now=False)
    if "error" in inv["cpu"] or not [i for i in probe_isas(inv["cpu"]) if i in ("avx2", "sse2")]:
        pytest.skip("this CPU has none of the fake kernel's ISAs (an ARM host)")
    return inv


def _wait(probe: BackgroundProbe) -> None:
    assert probe.done.wait(30), "the background probe did not end"


def test_the_inventory_for_registration_runs_no_probe(tmp_path):
    kbin = _fake(tmp_path)
    cache = tmp_path / "fma-probe.json"
    inv = _inventory(tmp_path, kbin, cache)
    assert _calls(kbin) == [] and "fma_probe" not in inv["cpu"]  # none kept: none sent, and none taken
    fma_probe.keep(cache, fma_probe.cache_key(inv["cpu"], inv["kernel"]), {"isa": {"avx2": {"fma": True,
                                                                                           "fma_units": None}}})
    again = collect("/", kernel_bin=kbin, probe_cache=cache, probe_now=False)
    assert again["cpu"]["fma_probe"]["isa"]["avx2"]["fma_units"] is None  # the kept one, disturbed as it was
    assert _calls(kbin) == []


def test_no_probe_kept_one_is_taken_after_the_start_kept_and_sent(tmp_path):
    kbin = _fake(tmp_path)
    cache = tmp_path / "fma-probe.json"
    inv = _inventory(tmp_path, kbin, cache)
    sent: list[dict] = []
    probe = BackgroundProbe.plan(kbin, inv, cache, sent.append)
    assert probe is not None
    probe.start()
    assert probe.wanted.is_set()  # the daemon takes no run until it is done
    _wait(probe)
    assert not probe.wanted.is_set()
    assert len(sent) == 1 and sent[0]["isa"]["avx2"]["fma_units"] == 2
    assert json.loads(cache.read_text())["disturbed"] is False
    # the next start: a quiet probe kept, nothing to take
    inv2 = _inventory(tmp_path, kbin, cache)
    assert inv2["cpu"]["fma_probe"] == sent[0]
    assert BackgroundProbe.plan(kbin, inv2, cache, sent.append) is None
    assert BackgroundProbe.plan(None, inv, cache, sent.append) is None  # HOSTBENCH_FMA_PROBE=0: no kernel given


def test_a_disturbed_probe_kept_is_taken_again_only_where_the_machine_is_quiet(tmp_path):
    kbin = _fake(tmp_path)
    cache = tmp_path / "fma-probe.json"
    (tmp_path / "share").write_text("0.5")
    inv = _inventory(tmp_path, kbin, cache)
    sent: list[dict] = []
    first = BackgroundProbe.plan(kbin, inv, cache, sent.append)
    assert first is not None
    first.start()
    _wait(first)
    assert sent and sent[0]["isa"]["avx2"]["fma_units"] is None  # disturbed: sent and kept, marked so
    calls = len(_calls(kbin))
    (tmp_path / "share").write_text("1.0")
    # the other CPUs busy now: the disturbed one stays, no probe, no run held back
    inv = _inventory(tmp_path, kbin, cache)
    busy = BackgroundProbe.plan(kbin, inv, cache, sent.append)
    assert busy is not None
    busy.busy = lambda: 0.9
    busy.start()
    assert busy.done.is_set() and not busy.wanted.is_set() and len(_calls(kbin)) == calls and len(sent) == 1
    # quiet now: taken again, and the quiet one replaces the disturbed one
    quiet = BackgroundProbe.plan(kbin, inv, cache, sent.append)
    assert quiet is not None
    quiet.busy = lambda: 0.0
    t0 = time.monotonic()
    quiet.start()
    _wait(quiet)
    assert time.monotonic() - t0 < 30 and len(sent) == 2 and sent[1]["isa"]["avx2"]["fma_units"] == 2
    assert json.loads(cache.read_text())["disturbed"] is False


PROBING = r'''#!{python}
import json, os, subprocess, sys, time
args = sys.argv[1:]
if "--no_sampler" in args and "--isa" in args:  # the FMA probe: slow (a busy machine), then quiet AVX2 figures
    isa = args[args.index("--isa") + 1]
    with open({marks!r}, "a") as f:
        f.write(f"start {{time.time()}} {{isa}}\n")
    time.sleep(1.0)
    flop = {{"avx512": 32.0, "avx2": 16.0, "sse2": 4.0}}.get(isa, 4.0)
    print(json.dumps({{"type": "start", "clock_ghz": 3.0, "fma": True}}))
    print(json.dumps({{"type": "result", "value": flop * 3.0, "verified": True, "cpu_share": 1.0}}))
    with open({marks!r}, "a") as f:
        f.write(f"end {{time.time()}} {{isa}}\n")
    sys.exit(0)
os.execv({fake!r}, [{fake!r}, *args])
'''


def test_the_runner_registers_and_beats_before_its_probe_ends_and_takes_no_run_meanwhile(server, tmp_path,
                                                                                         fake_kernel):
    """A real runner process, probe on (HOSTBENCH_FMA_PROBE unset), a kernel whose probe is slow: the registration
    carries no probe (none was kept) and comes before the probe ends; no claim is made while it runs; a heartbeat
    afterwards carries the inventory with the probe, and the probe is kept in the state directory."""
    import os
    import subprocess
    import sys

    from runner_fakes import FakeServer

    marks = tmp_path / "probe.marks"
    kbin = tmp_path / "hbk-probing"
    kbin.write_text(PROBING.format(python=sys.executable, marks=str(marks), fake=str(fake_kernel("ok"))))
    kbin.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOSTBENCH_")}
    env.update(HOSTBENCH_SERVER=server.url, HOSTBENCH_RUNNER_STATE=str(tmp_path / "state"),
               HOSTBENCH_KERNEL_BIN=str(kbin), HOSTBENCH_RUNNER_NAME="probing-runner",
               HOSTBENCH_REGISTRATION_TOKEN=FakeServer.registration_token)
    log = tmp_path / "runner.log"
    proc = subprocess.Popen([sys.executable, "-m", "hostbench_runner"], env=env, stdout=log.open("ab"),
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        assert server.wait_for(lambda: server.registrations, 30), log.read_text()
        registered = time.time()
        reg = server.registrations[0]
        if "error" in reg["inventory"]["cpu"] or not [i for i in probe_isas(reg["inventory"]["cpu"])
                                                      if i in ("avx512", "avx2", "sse2")]:
            pytest.skip("this CPU has none of the fake kernel's ISAs (an ARM host)")
        assert "fma_probe" not in reg["inventory"]["cpu"]  # registered without a probe, none taken before

        def probed() -> bool:
            return any("fma_probe" in (hb.get("inventory") or {}).get("cpu", {}) for hb in server.heartbeats)

        first_work = None
        deadline = time.monotonic() + 90
        while (first_work is None or not probed()) and time.monotonic() < deadline:
            if first_work is None and any(p == "/api/runner/work" for _, p, _ in list(server.requests)):
                first_work = time.time()
            time.sleep(0.05)
        assert probed() and first_work is not None, log.read_text()
        sent = next(hb["inventory"]["cpu"]["fma_probe"] for hb in server.heartbeats
                    if "fma_probe" in (hb.get("inventory") or {}).get("cpu", {}))
        assert sent["isa"], sent
        beats_before = [hb for hb in server.heartbeats if "fma_probe" not in (hb.get("inventory") or {}).get("cpu", {})]
        assert beats_before  # it beat before the probe ended: the first beat carries the probe-less inventory
    finally:
        proc.terminate()
        proc.wait(30)
    lines = [line.split() for line in marks.read_text().splitlines()]
    last_end = max(float(t) for what, t, _ in lines if what == "end")
    assert registered < last_end, "registration waited for the probe"
    assert first_work > last_end, "a run was asked for while the probe ran"
    kept = json.loads((tmp_path / "state" / "fma-probe.json").read_text())
    assert kept["probe"] == sent


def test_a_new_inventory_goes_with_a_heartbeat_at_once_not_at_the_next_interval():
    """The probe taken after the start reaches the server with a heartbeat sent then, not up to an interval later
    (a run claimed meanwhile would be judged by the inventory without it)."""
    import threading

    from hostbench_runner.keepalive import Heartbeat

    beats: list[dict] = []

    class Api:
        def heartbeat(self, body: dict) -> dict:
            beats.append(body)
            return {}

    hb = Heartbeat(Api(), 60.0, {"cpu": {}}, lambda: None, threading.Event())  # type: ignore[arg-type]
    hb.start()
    try:
        deadline = time.monotonic() + 5
        while not beats and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(beats) == 1 and beats[0]["inventory"] == {"cpu": {}}
        hb.send_inventory({"cpu": {"fma_probe": {"isa": {}}}})
        deadline = time.monotonic() + 5
        while len(beats) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(beats) == 2 and beats[1]["inventory"] == {"cpu": {"fma_probe": {"isa": {}}}}
        time.sleep(0.3)
        assert len(beats) == 2  # then the interval again
    finally:
        hb.stop()
