"""hostbench starts on a small, busy machine (issue 28): the whole stack (PostgreSQL, Redis, API, control process,
Celery worker and beat, runner) held by a cgroup to a quarter of one CPU becomes healthy with its runner online,
nothing is killed for being slow, and a CPU run then succeeds with a verdict that says the CPU was taken. Then a
runner alone on a host held to a quarter of one CPU (the stack itself unlimited): it registers, stays online
through its heartbeats, and runs a job whose verdict says the CPU was taken, or that it judged the CPU share
against the host's quota (the quota is that host's capacity).

Real processes throughout. Needs a cgroup with a CPU quota (root: cgroup v2 cpu.max or v1 cpu.cfs_quota_us);
skips, saying why, where there is none."""
import os
import re
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from hostbench_stack import ROOT, STATE
from hostbench_stack.cpulimit import CpuLimit, why_not
from hostbench_stack.stack import Stack

SHARE = 0.25  # of one CPU
WHY_NOT = why_not()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")
if not (ROOT / "runner" / "kernels" / "build" / "hbk").exists():
    pytestmark = pytest.mark.skip(reason="the kernels are not built (make -C runner/kernels)")

# what a process killed for slowness leaves in the logs: uvicorn's supervisor ("Child process [N] died"), ours
# ("worker 1 (pid N) killed by signal 9"), a process killed outright
KILLED = re.compile(r"Child process \[\d+\] died|killed by signal|was not ready in time")
JOB = {"experiment": "cpu", "params": {"op": "fp64", "threads": [1], "repeats": 1, "duration_s": 2, "warmup_s": 0.5}}


@pytest.fixture(scope="module")
def starved():
    state = Path(tempfile.mkdtemp(prefix="starved-", dir=os.environ.get("HOSTBENCH_TEST_STATE") or STATE))
    saved = {k: os.environ.pop(k) for k in ("DATABASE_URL", "REDIS_URL") if k in os.environ}  # its own, limited
    lines: list[str] = []
    with CpuLimit("starved-stack", SHARE) as limit:
        # two API processes of each kind, as `up` starts on two CPUs: where uvicorn's supervisor killed workers
        stack = Stack(state, durable=False, runner_name="starved-host", cpu_limit=limit, api_workers=2,
                      control_workers=2, extra_env={"HOSTBENCH_FMA_PROBE": "0"})
        t0 = time.monotonic()
        try:
            stack.start(report=lines.append)
            took = time.monotonic() - t0
            print(f"\nstack at {SHARE:.0%} of one CPU: healthy with its runner online in {took:.0f} s "
                  f"(load {os.getloadavg()[0]:.1f}); {limit.stat().get('nr_throttled')} periods throttled")
            yield stack, limit, lines
        finally:
            stack.stop()
            os.environ.update(saved)


def _run(stack: Stack, host_id: int, headers: dict, timeout: float = 900) -> dict:
    r = httpx.post(f"{stack.url}/api/jobs", json={"host_ids": [host_id], **JOB}, headers=headers, timeout=60)
    assert r.status_code == 201, r.text
    run_id = r.json()["runs"][0]["id"]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = httpx.get(f"{stack.url}/api/runs/{run_id}", headers=headers, timeout=60).json()
        if run["status"] in ("succeeded", "failed", "untrusted", "cancelled"):
            return run
        time.sleep(1)
    raise AssertionError(f"run {run_id} still {run['status']} after {timeout} s")


def _host(stack: Stack, name: str, headers: dict) -> dict:
    hosts = httpx.get(f"{stack.url}/api/hosts", headers=headers, timeout=60).json()["data"]
    return next(h for h in hosts if h["name"] == name)


def _nothing_killed(stack: Stack) -> None:
    for c in stack.children.values():
        assert c.alive(), f"{c.name} is not running"
        assert c.restarts == [], f"{c.name} was restarted"
        text = c.log.read_text(errors="replace")
        assert not KILLED.search(text), f"{c.name}: {KILLED.search(text)}"
    # the API supervisor imported the application once and forked each kind's two workers once: none died, none
    # was replaced
    text = stack.children["api"].log.read_text(errors="replace")
    assert text.count("loading app.main:app") == 1, text[-2000:]
    for kind in ("dashboard", "control"):
        assert len(re.findall(kind + r" worker \d+ started", text)) == 2, text[-2000:]


def test_the_whole_stack_on_a_quarter_of_one_cpu(starved):
    stack, limit, lines = starved
    assert limit.stat()["nr_throttled"] > 0, "the quota never bit: this was no starved start"
    held = set(limit.pids())
    assert all(c.proc is not None and c.proc.pid in held for c in stack.children.values())
    _nothing_killed(stack)
    headers = stack.admin_headers()
    host = _host(stack, "starved-host", headers)
    assert host["online"]
    run = _run(stack, host["id"], headers)
    assert run["status"] == "succeeded", run["status_reason"]
    verdict = run["result"]["verdict"]
    assert verdict in ("disturbed", "cpu_lost", "throttled"), (verdict, run["result"])  # the CPU was taken
    _nothing_killed(stack)


def test_a_runner_alone_on_a_quarter_of_one_cpu(starved):
    stack, limit, _ = starved
    limit.release()  # the server side unlimited from here on: the small host is the runner's alone
    headers = stack.admin_headers()
    with CpuLimit("starved-runner", SHARE) as small:
        runner = stack.start_runner("runner-small", stack.state / "runner-small",
                                    {"HOSTBENCH_RUNNER_NAME": "small-host"}, cpu_limit=small)
        try:
            stack.wait_healthy(runners=2)
            assert runner.proc is not None and runner.proc.pid in small.pids()
            host = _host(stack, "small-host", headers)
            # online through its heartbeats while idle, and while a job takes its quarter of a CPU
            end = time.monotonic() + 25
            while time.monotonic() < end:
                assert _host(stack, "small-host", headers)["online"], "the small host went offline"
                time.sleep(1)
            run = _run(stack, host["id"], headers)
            assert run["status"] == "succeeded", run["status_reason"]
            # its quota is its capacity (the runner reports its cgroup's CPU quota): valid only where the verdict
            # says it judged the share against that quota; else the CPU was taken (disturbed)
            res = run["result"]
            assert res["verdict"] in ("disturbed", "cpu_lost", "throttled") or (
                res["verdict"] == "valid" and any("CPU quota (0.25 CPU" in c for c in res["checked"])), res
            assert _host(stack, "small-host", headers)["online"]
            assert small.stat()["nr_throttled"] > 0
            assert runner.alive() and not KILLED.search(runner.log.read_text(errors="replace"))
        finally:
            stack.children.pop("runner-small")
            from hostbench_stack.services import stop_process

            stop_process(runner.proc)
