"""./hostbench chaos: faults injected by process id into the real stack, then the ledger checked
(docs/reliability.md, rule 11).

The stack is the real one (embedded PostgreSQL and Redis, the API, a Celery worker and beat, two runners with the
C kernels) in a short-lease profile. Each trial runs a short real job, injects one fault at a random moment into a
process the trial started, and afterwards checks what PostgreSQL holds: the run terminal, every sample the runner
had spooled present exactly once with contiguous `seq`, no kernel left running, no host stuck busy.

Scenarios:
- runner-kill: `kill -9` of the runner during a run; odd trials restart it 3 s later, even ones only once the
  server has resolved the run (it stayed down).
- idle-runner-kill: `kill -9` of an idle runner (its long poll open), then a job for its host within the poll's
  window: the dead poll must claim nothing; the job runs once the runner is back.
- runner-stop: SIGSTOP of the runner mid-run until the server has failed the run, then SIGCONT: the kernel that
  ran on meanwhile must be gone within 2 s + one renewal period; the attempt's samples stored once.
- worker-kill: `kill -9` of the Celery worker, a job created while it is down, the worker back 2 s later: the
  run starts within 2 s + the reconcile period + 3 s, once, and no pool process of the killed worker lives on.
- beat-kill: `kill -9` of Celery beat, kept down for the trial: a job created meanwhile still starts within the
  reconcile period + 3 s, once.
- redis-kill: `kill -9` of Redis for --redis-outage-s (20 s), a job created meanwhile and one right after its
  return: both run once, every sample stored once, the second starts within 30 s of Redis's return.
- postgres-stop: PostgreSQL stopped at once (SIGQUIT) during a run for --pg-outage-s (20 s), then started again:
  the API answers 503 with Retry-After throughout (a 500, a 503 without it, or an answer slower than 5 s is a
  bad answer), the run is not failed and not restarted, every sample is stored once.

- redis-stop, postgres-hang, beat-stop: the part hung (SIGSTOP) for --hang-s rather than dead: no answer waits on
  it longer than a short timeout (503 with Retry-After where the database is needed), health says what is not
  happening, a running benchmark is not failed, a frozen runner's run is still expired.
- api-kill: the whole API killed while a browser-like client follows a run's live stream: resumed by
  Last-Event-ID with no gap and no duplicate.
- partition: the link of a runner in a network namespace cut mid-run (10 s; odd trials 60 s).
- spool-full: the runner's spool file system filled mid-run (odd trials: before the run): the run fails at once
  with the real reason, the runner works again once there is space.

Scenario groups live in kills.py, outages.py and host.py; base.py holds the profile and the helpers. It prints
one row per scenario and ends with one JSON line, as `./hostbench bench` does."""
import argparse
import json
import os
import random
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from hostbench_stack import STATE, netns
from hostbench_stack.netns import Netns
from hostbench_stack.stack import Stack

from hostbench_harness.chaos.base import HEARTBEAT_S, LEASE_S, RECONCILE_S, Tally, _small_tmpfs
from hostbench_harness.chaos.host import HostTrials
from hostbench_harness.chaos.kills import KillTrials
from hostbench_harness.chaos.outages import OutageTrials

__all__ = ["SCENARIOS", "Tally", "Trials", "add_arguments", "run"]


class Trials(KillTrials, OutageTrials, HostTrials):
    """Every scenario, on one stack."""


Scenario = Callable[[Trials, Tally, int], None]
SCENARIOS: dict[str, Scenario] = {
             "runner-kill": Trials.runner_kill, "idle-runner-kill": Trials.idle_runner_kill,
             "runner-stop": Trials.runner_stop,
             "worker-kill": Trials.worker_kill, "beat-kill": Trials.beat_kill,
             "redis-kill": Trials.redis_kill, "postgres-stop": Trials.postgres_stop,
             "redis-stop": Trials.redis_stop, "postgres-hang": Trials.postgres_hang, "beat-stop": Trials.beat_stop,
             "api-kill": Trials.api_kill, "partition": Trials.partition, "spool-full": Trials.spool_full}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trials", type=int, default=3, help="trials per scenario (default 3)")
    p.add_argument("--scenario", action="append", choices=sorted(SCENARIOS), default=[],
                   help="run only these scenarios; repeatable")
    p.add_argument("--seed", type=int, default=None, help="seed for the fault moments")
    p.add_argument("--pg-outage-s", type=float, default=20.0,
                   help="how long postgres-stop keeps PostgreSQL down (default 20 s)")
    p.add_argument("--redis-outage-s", type=float, default=20.0,
                   help="how long redis-kill keeps Redis down (default 20 s)")
    p.add_argument("--partition-s", type=float, default=10.0,
                   help="how long partition cuts the runner's link (default 10 s; odd trials 6 times as long)")
    p.add_argument("--hang-s", type=float, default=20.0,
                   help="how long redis-stop, postgres-hang and beat-stop keep a part hung (default 20 s)")


def run(args: argparse.Namespace) -> int:
    names = args.scenario or list(SCENARIOS)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    STATE.mkdir(exist_ok=True)
    state = Path(tempfile.mkdtemp(prefix="chaos-", dir=STATE))
    # durable: the production settings (fsync, synchronous commit), which the postgres-stop scenario relies on
    stack = Stack(state, durable=True, runner_name="chaos-a", database="hostbench_chaos", fresh_database=True,
                  extra_env={"LEASE_S": str(LEASE_S), "RECONCILE_S": str(RECONCILE_S), "HOSTBENCH_FMA_PROBE": "0",
                             "RUNNER_HEARTBEAT_BUSY_S": str(HEARTBEAT_S), "RUNNER_HEARTBEAT_IDLE_S": str(HEARTBEAT_S)})
    tallies = {n: Tally() for n in names}
    t0 = time.monotonic()
    ns, ns_why = None, ""
    spool_mount: Path | None = None
    spool_why = ""
    if "partition" in names:  # a third host behind a link the trial can cut: a network namespace
        ns_why = netns.available() or ""
        if not ns_why:
            try:
                outer, inner = netns.free_pair(170, 200)
                ns = Netns(f"hbchaos{os.getpid() % 100000}", outer, inner).create()
                stack.bind = "0.0.0.0"  # noqa: S104 - the namespace reaches the API at the veth address
            except RuntimeError as exc:
                ns_why = str(exc)
    try:
        stack.start(report=lambda line: print(f"chaos: {line}", flush=True))
        stack.start_runner("runner-b", state / "runner-b", {"HOSTBENCH_RUNNER_NAME": "chaos-b"})
        if ns is not None:
            stack.start_runner("runner-c", state / "runner-c", {
                "HOSTBENCH_RUNNER_NAME": "chaos-c", "HOSTBENCH_SERVER": f"http://{ns.outer_ip}:{stack.control_port}"},
                prefix=["ip", "netns", "exec", ns.name])
        if "spool-full" in names:
            spool_mount, spool_why = _small_tmpfs(state / "runner-d" / "spool", "2m")
            if spool_mount is not None:
                stack.start_runner("runner-d", state / "runner-d", {"HOSTBENCH_RUNNER_NAME": "chaos-d"})
        stack.wait_healthy(runners=2 + (ns is not None) + (spool_mount is not None))
        trials = Trials(stack, random.Random(seed))  # noqa: S311 - seeded fault timing, reproducible; not crypto
        trials.ns, trials.ns_why = ns, ns_why
        trials.spool_mount, trials.spool_why = spool_mount, spool_why
        trials.partition_s = args.partition_s
        trials.pg_outage_s = args.pg_outage_s
        trials.redis_outage_s = args.redis_outage_s
        trials.hang_s = args.hang_s
        for name in names:
            for i in range(args.trials):
                tallies[name].trials += 1
                SCENARIOS[name](trials, tallies[name], i)
    except (RuntimeError, httpx.HTTPError) as exc:
        print(f"chaos: the stack failed: {exc} (logs in {stack.logs})", flush=True)
        _report(tallies, seed, time.monotonic() - t0, error=str(exc))
        return 1
    finally:
        stack.stop()
        if ns is not None:
            ns.destroy()
        if spool_mount is not None:
            subprocess.run(["umount", str(spool_mount)], check=False, capture_output=True)
    ok = _report(tallies, seed, time.monotonic() - t0)
    return 0 if ok else 1


def _report(tallies: dict[str, Tally], seed: int, took_s: float, error: str | None = None) -> bool:
    head = f"{'scenario':18s} {'trials':>6s} {'lost':>5s} {'dup':>4s} {'stuck':>5s} {'kernels':>7s} " \
           f"{'dead claims':>11s} {'bad answers':>11s} {'p50 s':>6s} {'max s':>6s}"
    print(head)
    print("-" * len(head))
    for name, t in tallies.items():
        r = t.row()
        fmt = lambda v: "-" if v is None else f"{v:.1f}"  # noqa: E731
        print(f"{name:18s} {r['trials']:6d} {r['lost']:5d} {r['duplicated']:4d} {r['stuck']:5d} "
              f"{r['kernels_left']:7d} {r['dead_claims']:11d} {r['bad_answers']:11d} {fmt(r['resolve_p50_s']):>6s} "
              f"{fmt(r['resolve_max_s']):>6s}")
        # every note of a scenario that found something (the trial that went wrong may be the 87th), else ten
        for note in t.notes if not t.ok else t.notes[:10]:
            print(f"    {note}")
    ok = error is None and all(t.ok for t in tallies.values())
    print(f"resolve = seconds from the fault (runner-kill; runner-stop: to SIGCONT, once the server failed the "
          f"run) or from the runner's return (idle-runner-kill) to the "
          f"run's end; from the kill to the run's start (worker-kill, beat-kill); for worker-kill 'kernels' counts "
          f"pool processes that outlived their worker; from Redis's return to the next job's start (redis-kill); "
          f"from PostgreSQL's return to the run's end (postgres-stop); "
          f"lease {LEASE_S:.0f} s, reconcile every {RECONCILE_S:.0f} s; "
          f"seed {seed}; {took_s:.0f} s")
    # a scenario that found something carries its first notes: a CI page may show no more than this line
    line = {"chaos": {n: {**t.row(), **({} if t.ok else {"notes": [x[:300] for x in t.notes[:3]]})}
                      for n, t in tallies.items()}, "seed": seed, "ok": ok}
    if error:
        line["error"] = error
    print(json.dumps(line), flush=True)
    return ok
