"""./hostbench load: the real stack under a fleet's load, from one asyncio process.

It starts the stack as `./hostbench test` does (embedded PostgreSQL and Redis, migrations, the API, a Celery
worker and beat; no real runner), then:

1. registers N simulated runners through the real protocol (an admin's registration token each, then
   POST /api/runners/register) and lets them idle: a long poll on GET /api/runner/work, a heartbeat every 5 s;
   the API's CPU is measured for this idle phase alone;
2. gives R of them a cpu_trace run each (real jobs, dispatched by the real Celery doorbell). A runner that is
   handed a run behaves like hostbench_runner: start, a lease renewal every 5 s, samples with the kernel's
   fields at --rate per second into a spool, a batch of at most 1,000 sent every --upload-interval, a batch the
   server did not acknowledge (5xx, 429, timeout) kept and sent again after a backoff that honours Retry-After;
3. opens M browser-like live streams (SSE, viewer users' API tokens) on the running runs and sends dashboard
   reads at --reads per second (open loop: a slow answer does not slow the offered rate);
4. optionally fires bursts of K simultaneous GET /api/hosts/1 (--burst 100,1000) while the runs go on;
5. stops the samples, drains every spool, finishes the runs, and compares the samples PostgreSQL holds with
   the samples the API acknowledged, run by run: any difference fails the command (exit 1).

The HTTP client is a small HTTP/1.1 keep-alive client on asyncio streams (this module), not httpx: on a
2-core machine the load generator shares the CPU with the stack, and its per-request cost is what decides how
much load one process can offer. It prints a table, then one JSON line."""
import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
from hostbench_stack import ROOT, STATE
from hostbench_stack.stack import Stack

from hostbench_harness.load.base import HEARTBEAT_S, Client, Figures, ms, pct, retry_after, watch_loop_lag, where
from hostbench_harness.load.browsers import BURST_PATH, burst, health_probe, reads_loop, stream_loop
from hostbench_harness.load.procs import Meter, _procs, api_procs, rss_mib
from hostbench_harness.load.sim import RunState, SimRunner

# --- the whole run ------------------------------------------------------------------------------------------

class Load:
    def __init__(self, args: argparse.Namespace, url: str, control_url: str | None = None):
        u = urlsplit(url)
        self.host, self.port = u.hostname or "127.0.0.1", u.port or 80
        c = urlsplit(control_url or url)  # the runners' address (their own API process)
        self.control_host, self.control_port = c.hostname or "127.0.0.1", c.port or 80
        self.args = args
        self.rate = args.rate
        self.upload_interval = args.upload_interval
        self.reads_per_s = args.reads
        self.fig = Figures()
        self.runs: dict[int, RunState] = {}
        self.running: set[SimRunner] = set()
        self.watched: set[int] = set()
        self.measured: dict[tuple[int, int], float] = {}
        self.host_ids: list[int] = []
        self.stop_samples = asyncio.Event()
        self.stop_streams = asyncio.Event()
        self.lost_runs: list[tuple[int, str]] = []
        self.rejected: list[tuple[int, int, str]] = []


def say(msg: str) -> None:
    print(f"[load {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


_VIEWERS = """
import sys
from app.core.db import get_sessionmaker
from app.users import service as users
with get_sessionmaker()() as session:
    for i in range(int(sys.argv[1])):
        user = users.create_user(session, f"load-viewer-{i}", "viewer", None)
        session.commit()
        print(users.create_api_token(session, user, "load", None)[0])
        session.commit()
"""


def make_viewers(stack: Any, n: int) -> list[str]:
    """n viewer users (the people with dashboards open), an API token each, in one backend process."""
    r = subprocess.run([sys.executable, "-c", _VIEWERS, str(n)], cwd=ROOT / "backend", env=stack.env(),
                       capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"creating the viewer users failed: {r.stderr[-2000:]}")
    return r.stdout.split()


async def drive(args: argparse.Namespace, stack: Any) -> dict:
    load = Load(args, stack.url, stack.control_url)
    admin = stack.admin_headers()["Authorization"][7:]
    # the people: enough for the streams (--streams-per-user each) and for the reads (20 a second each at most)
    viewers = make_viewers(stack, max(1, -(-args.streams // args.streams_per_user), -(-int(args.reads) // 20)))
    api = Meter(lambda: api_procs(stack.children["api"].proc.pid, dashboard=True))  # the dashboard's API processes
    control = Meter(lambda: api_procs(stack.children["api"].proc.pid, dashboard=False))  # the runners' (+ supervisor)
    pg = Meter(lambda: _procs(stack.pg.proc.pid) if stack.pg and stack.pg.proc else [])
    me = Meter(lambda: _procs(os.getpid())[:1])
    report: dict[str, Any] = {"runners": args.runners, "running": args.running, "streams": args.streams,
                              "reads_per_s_offered": args.reads, "rate_per_run": args.rate,
                              "seconds": args.seconds, "api_workers": args.api_workers,
                              "control_workers": args.control_workers}

    # 1. registration, then the idle fleet
    say(f"registering {args.runners} runners")
    runners = [SimRunner(load, i) for i in range(args.runners)]
    sem = asyncio.Semaphore(16)

    async def reg(r: SimRunner) -> None:
        async with sem:
            await r.register(admin)

    t0 = time.monotonic()
    await asyncio.gather(*(reg(r) for r in runners))
    report["register_s"] = round(time.monotonic() - t0, 1)
    load.host_ids = [r.host_id for r in runners]
    say(f"registered in {report['register_s']} s; starting their heartbeats and long polls")
    for i, r in enumerate(runners):
        r.start()
        if i % 50 == 49:
            await asyncio.sleep(0.05)
    await asyncio.sleep(HEARTBEAT_S + 1)  # every runner has polled and beaten once
    if args.idle_seconds > 0:
        api.mark()
        control.mark()
        pg.mark()
        await asyncio.sleep(args.idle_seconds)
        report["idle_control_cores"] = control.cores()
        report["idle_api_cores"] = round(api.cores() + report["idle_control_cores"], 2)
        report["idle_pg_cores"] = pg.cores()
        say(f"idle fleet: API {report['idle_api_cores']} cores (of which the runners' process "
            f"{report['idle_control_cores']}), PostgreSQL {report['idle_pg_cores']} cores")

    # 2. runs: cpu_trace jobs of up to 16 hosts each, as an operator would create them
    chosen = runners[:args.running]
    for i in range(0, len(chosen), 16):
        ids = [r.host_id for r in chosen[i:i + 16]]
        for _ in range(30):
            st, hdrs, body = await Client(load.host, load.port).request(
                "POST", "/api/jobs", token=admin, body={"experiment": "cpu_trace", "host_ids": ids,
                                                        "params": {"duration_s": 3600, "threads": 1}})
            if st == 201:
                break
            if st not in (429, 503):
                raise RuntimeError(f"could not create a job: HTTP {st} {body[:300]!r}")
            await asyncio.sleep(min(5.0, retry_after(hdrs, 1.0)))
        else:
            raise RuntimeError(f"could not create a job: HTTP {st} {body[:300]!r}")
    deadline = time.monotonic() + 60
    while len(load.running) < len(chosen) and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
    say(f"{len(load.running)} of {len(chosen)} runs started")
    report["runs_started"] = len(load.running)

    # 3. browsers: live streams spread over the runs, dashboard reads
    run_ids = sorted(load.runs)
    stream_tasks = []
    if run_ids:
        for i in range(args.streams):
            run_id = run_ids[i % len(run_ids)]
            load.watched.add(run_id)
            stream_tasks.append(asyncio.create_task(stream_loop(load, run_id, viewers[i // args.streams_per_user])))
    reads_task = asyncio.create_task(reads_loop(load, viewers)) if args.reads > 0 else None
    await asyncio.sleep(3)  # streams open, backlogs read

    # 4. measure
    say(f"measuring for {args.seconds} s")
    lag_task = asyncio.create_task(watch_loop_lag(load.fig))
    probe_task = asyncio.create_task(health_probe(load))
    load.fig.measuring = True
    api.mark()
    control.mark()
    pg.mark()
    me.mark()
    t0 = time.monotonic()
    bursts: list[dict] = []

    async def fire_bursts(pause_s: float) -> None:
        for k in args.burst:
            say(f"burst of {k} simultaneous GET {BURST_PATH}")
            bursts.append(await burst(load, k, viewers[0]))
            await asyncio.sleep(pause_s)

    if args.burst and args.seconds > 0:
        await asyncio.sleep(min(args.seconds / 2, 10))
        await fire_bursts(2)
    await asyncio.sleep(max(0.0, args.seconds - (time.monotonic() - t0)))
    elapsed = time.monotonic() - t0
    load.fig.measuring = False
    lag_task.cancel()
    probe_task.cancel()
    rss = rss_mib(_procs(stack.children["api"].proc.pid))  # both kinds: one supervisor
    report["control_cores"] = control.cores()
    report["dashboard_api_cores"] = api.cores()
    report["api_cores"] = round(report["dashboard_api_cores"] + report["control_cores"], 2)
    report["pg_cores"] = pg.cores()
    report["load_generator_cores"] = me.cores()
    report["api_rss_mib"] = round(rss, 1)
    report["loadavg_1m_after"] = round(os.getloadavg()[0], 2)
    if args.burst and args.seconds <= 0:
        await fire_bursts(0)
    f = load.fig
    report.update({
        "samples_per_s_stored": round(f.samples_acked / elapsed, 1),
        "batch_ack_p50_ms": ms(pct(f.batch_ack, 50)), "batch_ack_p99_ms": ms(pct(f.batch_ack, 99)),
        "batches": len(f.batch_ack),
        "stream_p50_ms": ms(pct(f.stream, 50)), "stream_p95_ms": ms(pct(f.stream, 95)),
        "stream_p99_ms": ms(pct(f.stream, 99)), "stream_samples": len(f.stream),
        "streams_open_at_end": f.streams_open, "streams_refused": dict(f.streams_refused),
        "lease_p99_ms": ms(pct(f.lease, 99)), "lease_max_ms": ms(max(f.lease) if f.lease else None),
        "lease_renewals": len(f.lease),
        "heartbeat_p99_ms": ms(pct(f.heartbeat, 99)),
        "reads_per_s_answered": round(len(f.reads) / elapsed, 1), "read_p95_ms": ms(pct(f.reads, 95)),
        "reads_skipped": f.reads_skipped, "slowest_answer_ms": ms(f.slowest),
        # the dashboard process's CPU over the reads it answered (it also serves the live streams' opening reads)
        "dashboard_cpu_ms_per_read": round(report["dashboard_api_cores"] * 1000 / (len(f.reads) / elapsed), 2)
        if f.reads else None,
        **health_figures(f),
        "generator_loop_lag_p50_ms": ms(pct(f.loop_lag, 50)), "generator_loop_lag_p99_ms": ms(pct(f.loop_lag, 99)),
        "generator_loop_lag_max_ms": ms(max(f.loop_lag) if f.loop_lag else None),
        "bursts": bursts,
    })

    # 5. stop, drain, finish, check
    say("stopping samples, draining the spools")
    load.stop_samples.set()
    load.stop_streams.set()
    drain_deadline = time.monotonic() + 120
    while any(r.spool and not r.lost for r in load.runs.values()) and time.monotonic() < drain_deadline:
        await asyncio.sleep(0.5)
    unsent = sum(len(r.spool) for r in load.runs.values() if not r.lost)
    await asyncio.gather(*(r.finish() for r in chosen), return_exceptions=True)
    for t in stream_tasks:
        t.cancel()
    if reads_task is not None:
        reads_task.cancel()
    await asyncio.gather(*stream_tasks, *( [reads_task] if reads_task else []), return_exceptions=True)
    await asyncio.gather(*(r.shutdown() for r in runners), return_exceptions=True)
    report["errors"] = dict(sorted(f.errors.items()))
    report["server_errors"] = server_errors(f.errors, bursts)
    report["runs_lost"] = len({run_id for run_id, _ in load.lost_runs})
    report["runs_lost_why"] = lost_reasons(load.lost_runs)
    report["batches_rejected"] = len(load.rejected)
    report["unsent_after_drain"] = unsent
    report.update(check_stored(stack.database_url, load.runs))
    return report


def health_figures(f: Figures) -> dict:
    """The liveness probe's figures: how many, how many not 200 and what those said, how many over 2 s, the
    slowest (issue 31: 200 within 2 s throughout)."""
    return {"health_probes": len(f.health), "health_not_200": sum(1 for st, _ in f.health if st != 200),
            "health_not_200_why": dict(f.health_not_200.most_common()),
            "health_max_ms": ms(max((t for _, t in f.health), default=None)),
            "health_over_2s": sum(1 for _, t in f.health if t > 2.0),
            "health_over_2s_where": where(f.health_slow)["all"]}


def server_errors(errors: dict[str, int], bursts: list[dict]) -> int:
    """Answers of 500 and the like: a fault of the server's (issue 11: never, under any load). 503 is not one: it
    is the server refusing work it has no room for, with Retry-After."""
    def bad(status: str) -> bool:
        return status.isdigit() and 500 <= int(status) <= 599 and status != "503"

    n = sum(count for key, count in errors.items() if bad(key.rsplit(" ", 1)[-1]))
    return n + sum(count for b in bursts for status, count in b["statuses"].items() if bad(status))


def lost_reasons(lost: list[tuple[int, str]]) -> dict[str, int]:
    """Why runs were lost, by the server's reason with run ids and figures taken out, most frequent first: the
    first answer of each run that said 409."""
    first: dict[int, str] = {}
    for run_id, body in lost:
        first.setdefault(run_id, body)
    counts: dict[str, int] = {}
    for body in first.values():
        try:
            text = str(json.loads(body).get("detail", body))
        except (ValueError, AttributeError):
            text = body
        key = re.sub(r"\d+(\.\d+)?", "N", text)[:120]
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def check_stored(database_url: str, runs: dict[int, RunState]) -> dict:
    """Stored samples per (run, attempt) against the acknowledged ones: the same seqs, nothing more or less, and
    no seq twice. One exception, which loses nothing: a run the server ended (409) while a batch was on its way
    may hold samples whose acknowledgement never came (the batch was committed, its answer timed out, and the
    resend met the ended run); every acknowledged sample must still be there, and the extra ones are counted."""
    dsn = database_url.replace("postgresql+psycopg://", "postgresql://")
    mismatched = []
    stored_total = acked_total = unconfirmed = 0
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("select run_id, attempt, array_agg(seq) from samples group by run_id, attempt").fetchall()
    stored = {(r, a): list(seqs) for r, a, seqs in rows}
    for run in runs.values():
        seqs = stored.get((run.run_id, run.attempt), [])
        have = set(seqs)
        stored_total += len(seqs)
        acked_total += len(run.acked)
        extra = have - run.acked
        ok = len(have) == len(seqs) and run.acked <= have and (not extra or run.lost)
        if run.lost:
            unconfirmed += len(extra)
        if not ok:
            mismatched.append({"run_id": run.run_id, "stored": len(seqs), "acknowledged": len(run.acked),
                               "missing": len(run.acked - have), "duplicated": len(seqs) - len(have),
                               "extra": len(extra), "lost": run.lost})
    return {"stored_samples": stored_total, "acknowledged_samples": acked_total,
            "stored_unconfirmed_of_ended_runs": unconfirmed,
            "stored_equals_acknowledged": not mismatched, "mismatched_runs": mismatched[:10]}


def print_report(r: dict) -> None:
    rows = [
        ("runners online / running", f"{r['runners']} / {r.get('runs_started')}"),
        ("API cores, idle fleet only (runners' process)", f"{r.get('idle_api_cores')} ({r.get('idle_control_cores')})"),
        ("PostgreSQL cores, idle fleet only", r.get("idle_pg_cores")),
        ("samples/s stored", r.get("samples_per_s_stored")),
        ("batch ack p50 / p99 ms", f"{r.get('batch_ack_p50_ms')} / {r.get('batch_ack_p99_ms')}"),
        ("measurement→stream p50/p95/p99 ms",
         f"{r.get('stream_p50_ms')} / {r.get('stream_p95_ms')} / {r.get('stream_p99_ms')}"),
        ("streams open at end / refused", f"{r.get('streams_open_at_end')} / {r.get('streams_refused')}"),
        ("lease renewal p99 / max ms", f"{r.get('lease_p99_ms')} / {r.get('lease_max_ms')}"),
        ("heartbeat p99 ms", r.get("heartbeat_p99_ms")),
        ("dashboard reads/s answered, p95 ms", f"{r.get('reads_per_s_answered')}, {r.get('read_p95_ms')}"),
        ("dashboard CPU ms per read answered", r.get("dashboard_cpu_ms_per_read")),
        ("/api/health probes: not 200 / over 2 s / max ms",
         f"{r.get('health_not_200')} of {r.get('health_probes')} / {r.get('health_over_2s')} / "
         f"{r.get('health_max_ms')}"),
        ("/api/health answers not 200, by what they said", r.get("health_not_200_why") or "-"),
        ("/api/health probes over 2 s: where, mean / max ms (Server-Timing)", _where(r.get("health_over_2s_where"))),
        ("slowest answer ms", r.get("slowest_answer_ms")),
        ("errors", r.get("errors")),
        ("answers of 500 and the like (not 503)", r.get("server_errors")),
        ("runs lost (409), why", f"{r.get('runs_lost')} {r.get('runs_lost_why') or ''}".strip()),
        ("API cores: dashboard + runners' / RSS MiB",
         f"{r.get('dashboard_api_cores')} + {r.get('control_cores')} / {r.get('api_rss_mib')}"),
        ("PostgreSQL cores / load generator cores", f"{r.get('pg_cores')} / {r.get('load_generator_cores')}"),
        ("load generator's own loop lag p50 / p99 / max ms (in every figure above but the bursts)",
         f"{r.get('generator_loop_lag_p50_ms')} / {r.get('generator_loop_lag_p99_ms')} / "
         f"{r.get('generator_loop_lag_max_ms')}"),
        ("stored = acknowledged (stored / acked / unconfirmed of ended runs)",
         f"{r.get('stored_equals_acknowledged')} ({r.get('stored_samples')} / {r.get('acknowledged_samples')} / "
         f"{r.get('stored_unconfirmed_of_ended_runs')})"),
    ]
    for b in r.get("bursts", []):
        rows.append((f"burst {b['k']} (own process): statuses; p50 / p99 / max ms; over 5 s",
                     f"{b['statuses']}; {b['p50_ms']} / {b['p99_ms']} / {b['max_ms']}; {b['over_5s']}"))
        for group, label in (("all", "all answers"), ("over_5s", "answers over 5 s")):
            w = (b.get("where") or {}).get(group) or {}
            if w.get("n"):
                rows.append((f"burst {b['k']}, {label} ({w['n']}): where, mean / max ms (Server-Timing)", _where(w)))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    print(json.dumps(r, separators=(",", ":")), flush=True)


def _where(w: dict | None) -> str:
    """burster.where's summary of a group of answers, as a table cell."""
    if not w or not w.get("n"):
        return "-"
    return "; ".join(f"{k} {v['mean_ms']} / {v['max_ms']}" for k, v in w.items() if k != "n")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="./hostbench load")
    add_arguments(p)
    return p.parse_args(argv)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runners", type=int, default=1000, help="simulated runners online (default 1000)")
    p.add_argument("--running", type=int, default=200, help="of which have a run going (default 200)")
    p.add_argument("--rate", type=float, default=1.0, help="samples per second per run (default 1)")
    p.add_argument("--upload-interval", type=float, default=0.2,
                   help="seconds between a runner's batches while its spool is short (default 0.2, the runner's)")
    p.add_argument("--streams", type=int, default=500, help="live streams (SSE) open (default 500)")
    p.add_argument("--streams-per-user", type=int, default=10, help="streams per viewer user (default 10)")
    p.add_argument("--reads", type=float, default=1000, help="dashboard reads offered per second (default 1000)")
    p.add_argument("--seconds", type=float, default=60, help="measured seconds (default 60)")
    p.add_argument("--idle-seconds", type=float, default=10,
                   help="seconds the API's CPU is measured with the idle fleet only (default 10)")
    p.add_argument("--burst", type=lambda s: [int(x) for x in s.split(",") if x], default=[],
                   help=f"bursts of K simultaneous GET {BURST_PATH} during the measured time, e.g. 100,1000")
    p.add_argument("--api-workers", type=int, default=None,
                   help="the dashboard's API processes (uvicorn workers on the public port; default 1)")
    p.add_argument("--control-workers", type=int, default=None,
                   help="the runners' API processes (uvicorn workers on the runners' port; default 1)")


def run(args: argparse.Namespace) -> int:
    if args.running > args.runners:
        print("error: --running cannot exceed --runners", file=sys.stderr)
        return 2
    STATE.mkdir(exist_ok=True)
    state = Path(tempfile.mkdtemp(prefix="load-", dir=STATE))
    # the server's active-run caps (50 in all, 20 per person by default) would refuse the simulated fleet's runs
    cap = str(max(50, args.running + 16))
    # and each answer says where its time went in the API process (Server-Timing: the bursts' "where")
    extra = {"MAX_ACTIVE_JOBS": cap, "MAX_ACTIVE_RUNS_PER_USER": cap, "HOSTBENCH_SERVER_TIMING": "1"}
    stack = Stack(state, with_runner=False, durable=False, database="hostbench_load", fresh_database=True,
                  extra_env=extra, api_workers=args.api_workers, control_workers=args.control_workers)
    before = round(os.getloadavg()[0], 2)
    say(f"starting the stack in {state} (machine load {before:.2f})")
    ok = False
    try:
        stack.start(report=say)
        report = asyncio.run(drive(args, stack))
        report["loadavg_1m_before"] = before
        ok = bool(report["stored_equals_acknowledged"]) and report["server_errors"] == 0
        print_report(report)
    finally:
        stack.stop()
        if ok:
            shutil.rmtree(state, ignore_errors=True)
        else:
            say(f"logs kept in {state / 'logs'}")
    if not ok:
        print("error: stored samples differ from acknowledged samples, or the server answered 5xx other than 503",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(run(parse()))
