"""The plans and times of the reads that filter runs by label, at a size filled in a minute or two (docs/scaling.md,
"The label page and the quarter's report"): History's page under a label (first, and deep by keyset) and a report
over a quarter, under a label and under none (app.jobs.samples.daily), each through the backend's own function, then
EXPLAIN (ANALYZE, BUFFERS) of every statement it ran.

It fills a database of the real schema as `./hostbench size` shapes a fleet's year (200 hosts with instance labels,
--runs finished runs spread over a year ending now, two phases a run and the minute rollup of 100 samples a run: a
warm-up minute, two measured ones) with INSERT ... SELECT on the server, and no sample rows: neither read touches
them, and `./hostbench size` measures them. It fills at revision FILL_AT and then moves the database to the head
with the migrations (timed: their backfills at that size). With --base REV the same database is then moved down to REV's
migration head (this checkout's migrations downgrade it) and the same reads are made through REV's backend
(`git archive`), then moved back up: before and after on the same rows.

    .venv/bin/python stack/tools/read_plans.py [--runs 1000000] [--repeat 20] [--base REV] [--dir DIR]

Prints the plans, then one JSON line of p50/p95 per read and backend. The machine's other work disturbs the times
(not the plans): say how busy it was."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

from hostbench_stack import ROOT
from hostbench_stack.services import EmbeddedPostgres

TYPES = [f"type-{i}" for i in range(10)]
# The revision FILL is written for; the database is then moved to the head by the migrations, which backfill what
# later revisions add (0028: each ended run's measured summary, from the rollup), and that move is timed.
FILL_AT = "0027"

FILL = [
    """insert into hosts (name, hostname, runner_version, token_hash, registered_at, inventory, labels)
       select 'size-' || i, 'size-' || i || '.local', '0', md5('size-' || i), now() - interval '400 days', '{}',
              jsonb_build_object('provider', (array['aws', 'gcp', 'azure', 'onprem'])[1 + i %% 4],
                                 'instance_type', 'type-' || i %% 10,
                                 'region', (array['eu-1', 'us-1', 'ap-1'])[1 + i %% 3])
       from generate_series(1, 200) i""",
    """insert into jobs (id, created_at, experiment, params)
       select i, now() - interval '365 days' + (i * 365.0 * 86400 / %(n)s) * interval '1 second', 'memory', '{}'
       from generate_series(1, %(n)s) i""",
    """insert into runs (id, job_id, host_id, experiment, params, status, attempt, expected_duration_s, created_at,
                         started_at, finished_at, cancel_requested, last_seq, labels_snapshot)
       select i, i, h.id, 'memory', '{"op": "read", "threads": 4}', 'succeeded', 1, 100, j.created_at, j.created_at,
              j.created_at + interval '100 seconds', false, 99, h.labels
       from generate_series(1, %(n)s) i join jobs j on j.id = i join hosts h on h.name = 'size-' || (1 + i %% 200)""",
    """insert into sample_phases (id, run_id, attempt, threads, "repeat", warmup, unit, op, block_bytes)
       select 2 * i + w, i, 1, 4, 0, w = 0, 'GB/s', 'read', 1048576
       from generate_series(1, %(n)s) i, generate_series(0, 1) w""",
    """insert into sample_minutes (run_id, phase_id, minute, n, lo, hi, total)
       select i, 2 * i + w, m, case when w = 0 then 5 when m = 0 then 55 else 40 end, 20 + i %% 17, 22 + i %% 17,
              (case when w = 0 then 5 when m = 0 then 55 else 40 end) * (21.0 + i %% 17)
       from generate_series(1, %(n)s) i, generate_series(0, 1) w, generate_series(0, 1) m where w = 1 or m = 0""",
]


def _alembic(backend: Path, url: str, *args: str) -> str:
    env = dict(os.environ, DATABASE_URL=url, REDIS_URL="redis://127.0.0.1:9/0")
    return subprocess.run([sys.executable, "-m", "alembic", "-c", str(backend.parent / "migrations" / "alembic.ini"),
                           *args], cwd=backend, env=env, check=True, capture_output=True, text=True).stdout


def measure(url: str, runs: int, repeat: int) -> dict:
    """In a process of its own, importing the backend found first on sys.path (this checkout's, or --base's)."""
    import statistics
    from datetime import UTC, datetime, timedelta

    from app.core.db import get_engine
    from app.jobs import samples, service
    from app.jobs.schemas import RunFilter
    from sqlalchemy import event
    from sqlalchemy.orm import Session

    engine = get_engine()
    end = datetime.now(UTC)
    q_end = end - timedelta(days=30)
    out: dict = {}
    with Session(engine) as s:
        reads = {
            "history_label_page": lambda: service.list_runs(s, RunFilter(instance_type=TYPES[3]), 50),
            "history_label_deep_page": lambda: service.list_runs(s, RunFilter(instance_type=TYPES[3]), 50,
                                                                 before_id=runs // 2),
            "report_quarter_label": lambda: samples.daily(s, q_end - timedelta(days=91), q_end, "instance_type",
                                                          TYPES[5]),
            "report_quarter": lambda: samples.daily(s, q_end - timedelta(days=91), q_end),
        }
        for name, read in reads.items():
            read()
            s.rollback()
            times = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                read()
                times.append(time.perf_counter() - t0)
                s.rollback()
            times.sort()
            out[name] = {"p50_ms": round(statistics.median(times) * 1000, 1),
                         "p95_ms": round(times[min(len(times) - 1, round(0.95 * (len(times) - 1)))] * 1000, 1)}
            ran: list[tuple[str, object]] = []

            def record(conn, cursor, statement, parameters, context, executemany, ran=ran):  # noqa: ANN001, ANN202
                ran.append((statement, parameters))
            event.listen(engine, "before_cursor_execute", record)
            read()
            event.remove(engine, "before_cursor_execute", record)
            s.rollback()
            print(f"===== {name}: p50 {out[name]['p50_ms']} ms, p95 {out[name]['p95_ms']} ms", flush=True)
            for sql, params in ran:
                plan = s.connection().exec_driver_sql(f"explain (analyze, buffers) {sql}", params).all()
                print("\n".join(r[0] for r in plan), "\n", flush=True)
                s.rollback()
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--base", default=None, help="a commit to measure before: its backend, its migration head")
    p.add_argument("--dir", default=None, help="the embedded PostgreSQL's folder (default: a temporary one)")
    p.add_argument("--measure", default=None, help=argparse.SUPPRESS)  # the child: a database URL
    a = p.parse_args()
    if a.measure:
        print("RESULT " + json.dumps(measure(a.measure, a.runs, a.repeat)), flush=True)
        return
    base = Path(a.dir) if a.dir else Path(tempfile.mkdtemp(prefix="hb-plans-"))
    pg = EmbeddedPostgres(base / "pg", base / "pg.log", durable=False)
    pg.start()
    results: dict = {"runs": a.runs}
    try:
        url = pg.url("postgres")
        libpq = url.replace("postgresql+psycopg://", "postgresql://")
        _alembic(ROOT / "backend", url, "upgrade", FILL_AT)
        with psycopg.connect(libpq, autocommit=True) as c:
            for sql in FILL:
                c.execute(sql, {"n": a.runs})  # type: ignore[arg-type]
            for table in ("jobs", "runs", "sample_phases"):
                c.execute(f"select setval('{table}_id_seq', (select max(id) from {table}))")  # noqa: S608
            c.execute("vacuum analyze")
        t0 = time.monotonic()
        _alembic(ROOT / "backend", url, "upgrade", "head")  # the runs' summaries: the migration's backfill
        results["upgrade_from_fill_s"] = round(time.monotonic() - t0, 1)
        print(f"##### upgrade {FILL_AT} -> head: {results['upgrade_from_fill_s']} s", flush=True)
        with psycopg.connect(libpq, autocommit=True) as c:
            # twice: the first removes the row versions the backfill left, the second marks their pages all-visible
            # (as autovacuum does in time), which the reports' index-only scans need
            c.execute("vacuum analyze runs")
            c.execute("vacuum analyze")
            results["index_mb"] = {name: round(size / 2**20, 1) for name, size in c.execute(
                "select indexrelname, pg_relation_size(indexrelid) from pg_stat_user_indexes "
                "where relname = 'runs' order by 1")}
            print(f"##### index sizes, MiB: {results['index_mb']}", flush=True)

        def child(backend: Path) -> dict:
            env = dict(os.environ, DATABASE_URL=url, REDIS_URL="redis://127.0.0.1:9/0", PYTHONPATH=str(backend))
            got = subprocess.run([sys.executable, __file__, "--measure", url, "--runs", str(a.runs), "--repeat",
                                  str(a.repeat)], cwd=backend, env=env, check=True, capture_output=True, text=True)
            print(got.stdout.rpartition("RESULT ")[0], flush=True)
            return json.loads(got.stdout.rpartition("RESULT ")[2])

        print(f"##### this checkout, load average {os.getloadavg()[0]:.1f}", flush=True)
        results["head"] = child(ROOT / "backend")
        if a.base:
            old = base / "base"
            shutil.rmtree(old, ignore_errors=True)
            old.mkdir()
            archive = subprocess.run(["git", "archive", a.base, "backend", "migrations"], cwd=ROOT, check=True,
                                     capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
            rev = _alembic(old / "backend", url, "heads").split()[0]
            _alembic(ROOT / "backend", url, "downgrade", rev)
            with psycopg.connect(libpq, autocommit=True) as c:
                c.execute("analyze runs")
            print(f"##### {a.base} (migration head {rev}), load average {os.getloadavg()[0]:.1f}", flush=True)
            results[a.base] = child(old / "backend")
            _alembic(ROOT / "backend", url, "upgrade", "head")
    finally:
        pg.stop()
        if not a.dir:
            shutil.rmtree(base, ignore_errors=True)
    print(json.dumps(results, separators=(",", ":")), flush=True)


if __name__ == "__main__":
    main()
