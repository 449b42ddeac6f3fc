"""Start-up follows progress, not a stopwatch (issue 28), with real child processes: a process still working is
waited for however long it takes; one that makes no progress for HOSTBENCH_START_STALL_S, or dies, fails the start
with its name, the cause in words, its log and the log's last lines. The API supervisor (hostbench_stack.serve)
loads the application once, never kills a worker that is slow to start, and replaces one that died with a fork."""
import os
import signal
import sys
import time
from pathlib import Path

import httpx
import pytest

from hostbench_stack.progress import stall_s
from hostbench_stack.services import free_port, stop_process
from hostbench_stack.stack import Stack

HERE = Path(__file__).parent


def _stack(tmp_path: Path) -> Stack:
    return Stack(tmp_path, free_port(), with_runner=False, database_url="postgresql://unused",
                 redis_url="redis://unused")


def _serve(stack: Stack, name: str, workers: int, import_s: float) -> None:
    env = dict(os.environ, SLOW_APP_IMPORT_S=str(import_s), PYTHONPATH=str(HERE))
    stack._child(name, [sys.executable, "-m", "hostbench_stack.serve", "slow_app:app", "--port", str(stack.port),
                        "--workers", str(workers), "--no-proxy-headers"], HERE, env)


def test_a_process_that_keeps_working_is_waited_for_past_the_stall_limit(tmp_path):
    """8 s of CPU loading the application (silent), with a stall limit of 3 s: busy is not stuck. Two workers,
    each answering: the supervisor loaded once and forked both; none was killed."""
    stack = _stack(tmp_path)
    try:
        _serve(stack, "api", 2, 8)
        t0 = time.monotonic()
        lines: list[str] = []
        health = stack.wait_healthy(stall=3, report=lines.append)
        assert health["status"] == "ok" and time.monotonic() - t0 > 3
        log = stack.children["api"].log.read_text()
        assert log.count("loading slow_app:app") == 1 and log.count("worker 1 started") == 1, log
        assert "worker 2 started" in log and "killed" not in log and "exited" not in log
    finally:
        stack.stop()


def test_a_worker_that_died_is_replaced_by_a_fork_without_loading_again(tmp_path):
    stack = _stack(tmp_path)
    try:
        _serve(stack, "api", 1, 0)
        stack.wait_healthy(stall=30)
        worker = httpx.get(f"{stack.url}/api/health", timeout=10).json()["pid"]
        os.kill(worker, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while True:
            try:
                again = httpx.get(f"{stack.url}/api/health", timeout=10).json()["pid"]
                if again != worker:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "no new worker"
            time.sleep(0.2)
        log = stack.children["api"].log.read_text()
        assert f"worker 1 (pid {worker}) killed by signal 9 (SIGKILL)" in log, log
        assert log.count("loading slow_app:app") == 1 and log.count("worker 1 started") == 2, log
        assert stack.children["api"].alive()
    finally:
        stack.stop()
    assert "stopped" in stack.children["api"].log.read_text()  # SIGTERM: the workers ended, then the supervisor


def _nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def test_both_kinds_are_served_by_one_supervisor_that_loads_the_application_once(tmp_path):
    """The dashboard's and the runners' API processes: one import for both kinds (it was one per kind, and before
    that one per worker), each kind's workers on its own port; the dashboard's in a session of their own at a
    raised nice (so their autogroup yields the CPU too), the runners' at the supervisor's; a dead worker is
    replaced in its own kind."""
    stack = _stack(tmp_path)
    control = free_port()
    env = dict(os.environ, SLOW_APP_IMPORT_S="1", PYTHONPATH=str(HERE))
    stack._child("api", [sys.executable, "-m", "hostbench_stack.serve", "slow_app:app",
                         "--kind", f"dashboard:{stack.port}:2:5", "--kind", f"control:{control}:1:0",
                         "--no-proxy-headers"], HERE, env)
    try:
        stack.wait_healthy(stall=60)
        sup = stack.children["api"].proc.pid
        seen: dict[str, set[int]] = {"dashboard": set(), "control": set()}
        deadline = time.monotonic() + 30
        while len(seen["dashboard"]) < 2 or not seen["control"]:
            assert time.monotonic() < deadline, seen
            for kind, port in (("dashboard", stack.port), ("control", control)):
                with httpx.Client() as c:  # a new connection each time: the kernel spreads them over the workers
                    seen[kind].add(c.get(f"http://127.0.0.1:{port}/api/health", timeout=10).json()["pid"])
        assert len(seen["control"]) == 1 and not seen["dashboard"] & seen["control"]
        base = _nice(sup)
        for pid in seen["dashboard"]:
            assert _nice(pid) == min(19, base + 5) and os.getsid(pid) == pid  # a session (autogroup) of its own
            group = Path(f"/proc/{pid}/autogroup")
            if group.exists():
                assert group.read_text().split()[-1] == "5", group.read_text()
        (ctl,) = seen["control"]
        assert _nice(ctl) == base and os.getsid(ctl) == os.getsid(sup)
        os.kill(ctl, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{control}/api/health", timeout=10).json()["pid"] != ctl:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "no new control worker"
            time.sleep(0.2)
        log = stack.children["api"].log.read_text()
        assert log.count("loading slow_app:app") == 1, log
        assert f"control worker 1 (pid {ctl}) killed by signal 9 (SIGKILL)" in log, log
        assert log.count("control worker 1 started") == 2 and log.count("dashboard worker 1 started") == 1, log
    finally:
        stack.stop()
    log = stack.children["api"].log.read_text()
    assert "stopped" in log  # SIGTERM reached the dashboard's workers in their own sessions too
    for pid in seen["dashboard"]:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()


def test_serve_refuses_a_bad_kind():
    from hostbench_stack.serve import parse

    for bad in (["--kind", "dashboard:80"], ["--kind", "a:1:0:0"], ["--kind", "a:1:1:0", "--kind", "a:2:1:0"], []):
        with pytest.raises(SystemExit):
            parse(["x:app", *bad])
    assert [k.name for k in parse(["x:app", "--port", "5", "--kind", "control:6:2:0"]).kinds] == ["api", "control"]


def test_a_process_without_progress_fails_the_start_naming_it_and_its_log(tmp_path):
    stack = _stack(tmp_path)
    stack._child("worker", [sys.executable, "-c", "print('connecting to the broker', flush=True); "
                                                  "import time; time.sleep(600)"], tmp_path)
    try:
        t0 = time.monotonic()
        with pytest.raises(RuntimeError) as err:
            stack.wait_healthy(stall=2)
        assert time.monotonic() - t0 < 30
        text = str(err.value)
        pid = stack.children["worker"].proc.pid
        assert text.startswith(f"worker (pid {pid}) made no progress for 2 s (HOSTBENCH_START_STALL_S)"), text
        assert f"log {stack.children['worker'].log}" in text and "connecting to the broker" in text
        assert len(text.splitlines()) <= 25  # one screen
    finally:
        stop_process(stack.children["worker"].proc)


@pytest.mark.parametrize(("code", "words"), [
    ("print('no module named app', flush=True); raise SystemExit(1)", "exited with status 1"),
    ("import os, signal; print('loading', flush=True); os.kill(os.getpid(), signal.SIGKILL)",
     "was killed by signal 9 (SIGKILL)"),
])
def test_a_process_that_died_fails_the_start_with_the_cause_in_words(tmp_path, code, words):
    stack = _stack(tmp_path)
    stack._child("control", [sys.executable, "-c", code], tmp_path)
    with pytest.raises(RuntimeError) as err:
        stack.wait_healthy(stall=60)
    text = str(err.value)
    assert text.startswith(f"control (pid {stack.children['control'].proc.pid}) {words}"), text
    assert str(stack.children["control"].log) in text
    assert ("no module named app" if "SystemExit" in code else "loading") in text


def test_the_stall_setting(monkeypatch):
    monkeypatch.delenv("HOSTBENCH_START_STALL_S", raising=False)
    assert stall_s() == 300
    monkeypatch.setenv("HOSTBENCH_START_STALL_S", "900")
    assert stall_s() == 900
    for bad in ("soon", "0", "-5"):
        monkeypatch.setenv("HOSTBENCH_START_STALL_S", bad)
        with pytest.raises(RuntimeError, match="HOSTBENCH_START_STALL_S"):
            stall_s()
