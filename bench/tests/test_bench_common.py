"""The pure logic of ./hostbench bench: interleaving, re-measuring disturbed pairs, the report's last line."""
import json

from hostbench_bench.common import BenchReport, interleave, interleave_quiet


def seq(*values):
    it = iter(values)
    return lambda: next(it)


def test_interleave_alternates_and_takes_median_ratio():
    calls = []
    report = BenchReport("x")
    interleave(report, "m", "MB/s", "tool", lambda: calls.append("a") or 10.0, lambda: calls.append("b") or 8.0, 3)
    assert calls == ["a", "b", "b", "a", "a", "b"]  # which goes first alternates too
    assert report.ratios() == {"m": 1.25}


def test_interleave_quiet_swaps_the_order_every_other_pair_but_not_the_sides():
    calls = []
    report = BenchReport("x")
    interleave_quiet(report, "m", "u", "r", lambda: calls.append("a") or (3.0, 1.0),
                     lambda: calls.append("b") or (2.0, 1.0), 3, quiet=0.9)
    assert calls == ["a", "b", "b", "a", "a", "b"]
    assert [(p.ours, p.theirs) for p in report.pairs] == [(3.0, 2.0)] * 3


def test_quiet_pairs_are_kept_disturbed_ones_measured_again():
    report = BenchReport("cpu")
    ours = seq((100.0, 0.99), (80.0, 0.70), (101.0, 0.98), (99.0, 0.99))
    peak = seq(*[(120.0, 1.0)] * 4)
    interleave_quiet(report, "fp64", "GFLOP/s", "peak", ours, peak, 3, quiet=0.97)
    assert [p.ours for p in report.pairs] == [100.0, 101.0, 99.0]
    assert report.ratios()["fp64"] == round(100.0 / 120.0, 4)
    assert any("1 disturbed pair(s) measured again" in n and "80/120 (share 0.70)" in n for n in report.notes)


def test_too_few_quiet_pairs_keeps_the_least_disturbed_and_says_so():
    report = BenchReport("memory")
    ours = seq(*[(float(v), s) for v, s in ((1, 0.5), (2, 0.9), (3, 0.6), (4, 0.7))])
    theirs = seq(*[(1.0, 1.0)] * 4)
    interleave_quiet(report, "copy", "MB/s", "STREAM", ours, theirs, 2, quiet=0.95)
    assert sorted(p.ours for p in report.pairs) == [2.0, 4.0]
    assert any("0 of 4 pairs undisturbed" in n and "0.70" in n for n in report.notes)


def test_a_disturbed_reference_side_counts_too():
    report = BenchReport("cpu")
    ours = seq((1.0, 1.0), (1.0, 1.0))
    theirs = seq((1.0, 0.5), (1.0, 1.0))
    interleave_quiet(report, "m", "u", "r", ours, theirs, 1, quiet=0.9)
    assert len(report.pairs) == 1 and any("measured again" in n for n in report.notes)


def test_report_prints_one_json_object_last(capsys):
    report = BenchReport("disk")
    interleave(report, "seq", "MB/s", "fio", seq(3.0, 3.0, 3.0), seq(1.0, 2.0, 4.0), 3)
    report.missing.append("iozone: not installed")
    report.print()
    last = capsys.readouterr().out.strip().splitlines()[-1]
    doc = json.loads(last)
    assert doc["area"] == "disk" and doc["ratios"] == {"seq": 1.5} and len(doc["pairs"]) == 3
    assert doc["missing"] == ["iozone: not installed"]


# --- a tool's whole process group ends with the bench (mpirun leaves its ranks running otherwise) ---

SPAWN = ("import subprocess, sys, time; "
         "p = subprocess.Popen(['sleep', '60']); open(sys.argv[1], 'w').write(str(p.pid)); time.sleep(60)")


def _gone(pid: int) -> bool:
    try:
        state = open(f"/proc/{pid}/status").read()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in state  # a zombie waiting for its reaper has ended


def _wait_for(path, seconds: float = 10.0) -> int:
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} was not written")


def _wait_gone(pid: int, seconds: float = 10.0) -> bool:
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end and not _gone(pid):
        time.sleep(0.05)
    return _gone(pid)


def test_a_timeout_ends_the_tools_children_too(tmp_path):
    import subprocess
    import sys

    import pytest

    from hostbench_bench.common import run

    pidfile = tmp_path / "child.pid"
    with pytest.raises(subprocess.TimeoutExpired):
        run([sys.executable, "-c", SPAWN, str(pidfile)], timeout=2)
    assert _wait_gone(_wait_for(pidfile))


def test_sigterm_to_the_bench_ends_the_tools_children(tmp_path):
    import signal
    import subprocess
    import sys

    pidfile = tmp_path / "child.pid"
    script = ("import sys; from hostbench_bench.common import exit_on_sigterm, run; exit_on_sigterm(); "
              f"run([sys.executable, '-c', {SPAWN!r}, {str(pidfile)!r}])")
    bench = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.DEVNULL)
    try:
        child = _wait_for(pidfile)
        bench.send_signal(signal.SIGTERM)
        assert bench.wait(timeout=20) == 128 + signal.SIGTERM
        assert _wait_gone(child)
    finally:
        bench.kill()
