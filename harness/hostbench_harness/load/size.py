"""./hostbench size: a synthetic fleet's year of history in a database of the real schema, then the reads that
must stay fast at that size (issue 31 item 4; docs/scaling.md, "A year of a fleet's data").

It starts an embedded PostgreSQL of its own (or uses --database-url: an empty database), applies the migrations,
and fills it: --hosts hosts with instance labels, --runs finished runs spread evenly over --days days ending now
(a job each, ids growing with time as a real fleet's do), two phases a run (warm-up, measured) and
--samples-per-run samples a run, sent with COPY into the partitioned sample table in chunks of runs, each chunk's
minute rollup, the hosts' hours and the runs' measured summaries computed after it. Hosts, jobs, runs and phases
are made by INSERT ... SELECT on the server; only the samples, the bulk, go through COPY. Runs carry no result (the
History reads below pay for none).

Then it measures, each read --repeat times (p50 and p95, ms), through the backend's own functions on one
connection: the History first page and a deep page (half the runs back), a page filtered by a label, a host's
trend over the year (its hourly rollup, host_hours) and a report over a quarter (the runs' measured summaries; both
app.jobs.samples), one run's samples; the retention of the oldest month (app.worker.retention); bytes on disk per
sample (the sample table's partitions and their index, then with the phases and the rollups); and the ingest rate
of the real ingest statement (app.runner_api.fast.INGEST, batches of 60 samples) at that size against the same
database empty, before the fill. It prints a table, then one JSON line. The machine's other work disturbs the
times: say so with them.

The backend's modules (app.*) are imported inside the functions that use them, after the database URL is in the
environment: the backend's settings are read when its modules are first imported."""
import argparse
import io
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from hostbench_stack import ROOT
from hostbench_stack.services import EmbeddedPostgres
from sqlalchemy import text
from sqlalchemy.orm import Session

PY = sys.executable
TOKEN = "size-run-token"  # noqa: S105 - a made-up host's, in a database of its own; the ingest rate's host credential (hashed as the server hashes one)
INGEST_RUNS = 20  # runs the ingest rate writes into, a batch of INGEST_BATCH samples each in turn
INGEST_BATCH = 60
WARMUP = 5  # each run's first samples are its warm-up phase
PROVIDERS = ("aws", "gcp", "azure", "onprem")
TYPES = tuple(f"type-{i}" for i in range(10))
REGIONS = ("eu-1", "us-1", "ap-1")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs", type=int, default=20_000, help="finished runs over the simulated period (20000)")
    p.add_argument("--samples-per-run", type=int, default=100, help="samples a run (100: --runs x this in all)")
    p.add_argument("--hosts", type=int, default=None, help="hosts (default: one per 5,000 runs, at least 10)")
    p.add_argument("--days", type=int, default=365, help="the simulated period, ending now (365)")
    p.add_argument("--chunk-runs", type=int, default=10_000, help="runs per COPY transaction (10000)")
    p.add_argument("--ingest-batches", type=int, default=200, help="batches of 60 samples the ingest rate is "
                   "measured over, empty and at size (200)")
    p.add_argument("--repeat", type=int, default=20, help="times each read is measured (20)")
    p.add_argument("--dir", default=None, help="the embedded PostgreSQL's data folder (default: a temporary one, "
                   "removed at the end); it needs about 130 bytes a sample")
    p.add_argument("--database-url", default=None, help="an empty database to fill instead of an embedded server")
    p.add_argument("--measure-only", action="store_true", help="with --dir: measure the database an earlier run "
                   "left there (filled, or interrupted with Ctrl-C between chunks), without filling; the ingest "
                   "rate is then measured at size only")


def say(msg: str) -> None:
    print(f"[size {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    if args.runs < 10 or args.samples_per_run <= WARMUP or args.days < 120 or args.repeat < 1 \
            or args.ingest_batches < 1 or args.chunk_runs < 1:
        print("error: --runs at least 10, --samples-per-run more than 5, --days at least 120, --repeat, "
              "--ingest-batches and --chunk-runs at least 1", file=sys.stderr)
        return 2
    if args.measure_only and not args.dir:
        print("error: --measure-only needs the --dir of an earlier run", file=sys.stderr)
        return 2
    pg = None
    tmp = None
    url = args.database_url
    if url is None:
        base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="hb-size-"))
        tmp = None if args.dir else base
        base.mkdir(parents=True, exist_ok=True)
        pg = EmbeddedPostgres(base / "pg", base / "pg.log", durable=False)
        pg.start()

        if not args.measure_only:
            with psycopg.connect(_libpq(pg.url("postgres")), autocommit=True) as conn:
                conn.execute("drop database if exists size with (force)")
                conn.execute("create database size")
        url = pg.url("postgres").rsplit("/", 1)[0] + "/size"
    try:
        # the backend's settings want a Redis URL; nothing here reaches Redis
        env = dict(os.environ, DATABASE_URL=url, REDIS_URL="redis://127.0.0.1:9/0")
        subprocess.run([PY, "-m", "alembic", "-c", str(ROOT / "migrations" / "alembic.ini"), "upgrade", "head"],
                       cwd=ROOT / "backend", env=env, check=True, capture_output=True)
        os.environ.update(DATABASE_URL=url, REDIS_URL=env["REDIS_URL"])
        if str(ROOT / "backend") not in sys.path:
            sys.path.insert(0, str(ROOT / "backend"))
        report = Size(args, url).go()
    finally:
        if pg is not None:
            pg.stop()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    width = max(len(k) for k in report)
    for k, v in report.items():
        print(f"{k:<{width}}  {v}")
    print(json.dumps(report, separators=(",", ":")), flush=True)
    return 0


def _libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


def _pcts(times: list[float]) -> dict[str, float]:
    s = sorted(times)
    return {"p50_ms": round(statistics.median(s) * 1000, 2),
            "p95_ms": round(s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))] * 1000, 2)}


class Size:
    def __init__(self, args: argparse.Namespace, url: str):
        self.args = args
        self.conn = psycopg.connect(_libpq(url), autocommit=True)
        self.hosts = args.hosts or max(10, args.runs // 5000)
        from app.jobs.partitions import month_start

        self.end = datetime.now(UTC).replace(microsecond=0)
        self.start = month_start(self.end - timedelta(days=args.days))  # the oldest month whole (retention)
        self.runs = args.runs
        if args.measure_only:  # what an earlier run stored
            self.runs = int(self.conn.execute("select count(*) from runs").fetchone()[0])  # type: ignore[index]
            self.hosts = int(self.conn.execute("select count(*) from hosts").fetchone()[0])  # type: ignore[index]
            self.start = month_start(self.conn.execute("select min(created_at) from runs").fetchone()[0])  # type: ignore[index]
        planned = None if args.measure_only else self.runs * args.samples_per_run
        self.report: dict[str, Any] = {"runs": self.runs, "samples": planned, "hosts": self.hosts, "days": args.days}

    # --- filling -----------------------------------------------------------------------------------------------
    def go(self) -> dict[str, Any]:
        from app.core.security import hash_token
        from app.jobs import partitions

        c = self.conn
        if self.args.measure_only:
            self._sequences()
            c.execute("vacuum analyze")
            self.report["ingest_at_size_samples_per_s"] = self.ingest_rate()
            self.disk()
            self.reads()
            self.retention()
            return self.report
        c.execute("""insert into hosts (name, hostname, runner_version, token_hash, registered_at, inventory, labels)
                     select 'size-' || i, 'size-' || i || '.local', '0', md5('size-' || i), %(start)s, '{}',
                            jsonb_build_object('provider', (%(p)s::text[])[1 + i %% 4],
                                               'instance_type', (%(t)s::text[])[1 + i %% 10],
                                               'region', (%(r)s::text[])[1 + i %% 3])
                     from generate_series(1, %(n)s) i""",
                  {"start": self.start, "n": self.hosts, "p": list(PROVIDERS), "t": list(TYPES), "r": list(REGIONS)})
        c.execute("update hosts set token_hash = %s where name = 'size-1'", (hash_token(TOKEN),))
        from app.core.db import get_engine

        with Session(get_engine()) as session:
            partitions.ensure(session, self.start, self.end)
        self.report["ingest_empty_samples_per_s"] = self.ingest_rate()
        self.fill()
        c.execute("vacuum analyze")
        self.report["ingest_at_size_samples_per_s"] = self.ingest_rate()
        self.report["ingest_at_size_vs_empty"] = round(
            self.report["ingest_at_size_samples_per_s"] / self.report["ingest_empty_samples_per_s"], 3)
        self.disk()
        self.reads()
        self.retention()
        return self.report

    def fill(self) -> None:
        c, a = self.conn, self.args
        span = (self.end - self.start).total_seconds()
        per = a.samples_per_run
        t0 = time.monotonic()
        done = 0
        base = int(c.execute("select coalesce(max(id), 0) from runs").fetchone()[0])  # type: ignore[index]
        for lo in range(1, a.runs + 1, a.chunk_runs):
            hi = min(a.runs, lo + a.chunk_runs - 1)
            p = {"lo": base + lo, "hi": base + hi, "base": base, "n": a.runs, "start": self.start, "span": span,
                 "hosts": self.hosts, "per": per}
            with c.transaction():
                c.execute("insert into jobs (id, created_at, experiment, params) select i, %(start)s + "
                          "((i - %(base)s) * %(span)s / %(n)s) * interval '1 second', 'memory', '{}' "
                          "from generate_series(%(lo)s::int, %(hi)s::int) i", p)
                c.execute("""insert into runs (id, job_id, host_id, experiment, params, status, attempt,
                                 expected_duration_s, created_at, started_at, finished_at, cancel_requested, last_seq,
                                 labels_snapshot, samples_closed)
                             select i, i, h.id, 'memory', '{"op": "read", "threads": 4}', 'succeeded', 1, %(per)s,
                                    j.created_at, j.created_at, j.created_at + %(per)s * interval '1 second', false,
                                    %(per)s - 1, h.labels, true
                             from generate_series(%(lo)s::int, %(hi)s::int) i join jobs j on j.id = i
                             join hosts h on h.name = 'size-' || (1 + i %% %(hosts)s)""", p)
                c.execute("""insert into sample_phases (id, run_id, attempt, threads, "repeat", warmup, unit, op,
                                                        block_bytes)
                             select 2 * i + w, i, 1, 4, 0, w = 0, 'GB/s', 'read', 1048576
                             from generate_series(%(lo)s::int, %(hi)s::int) i, generate_series(0, 1) w""", p)
                created = c.execute("select id, created_at, host_id from runs where id between %(lo)s and %(hi)s "
                                    "order by id", p).fetchall()
                with c.cursor().copy("copy samples (run_at, seq, t, interval_s, value, received_at, run_id, attempt, "
                                     "phase_id) from stdin") as cp:
                    for run_id, at, host_id in created:
                        cp.write(self._rows(run_id, at, host_id, per))
                c.execute(f"""insert into sample_minutes (run_id, phase_id, minute, n, lo, hi, total)
                              select run_id, phase_id, {_minute()}, count(*), min(value), max(value), sum(value)
                              from samples where run_id between %(lo)s and %(hi)s group by 1, 2, 3""", p)  # noqa: S608
                # the hosts' hours from the chunk's rollup (an hour may straddle two chunks: added up)
                c.execute(f"""insert into host_hours as hh (host_id, experiment, unit, op, hour, n, lo, hi, total)
                              select r.host_id, r.experiment, p.unit, coalesce(p.op, ''),
                                     {_hour()}, sum(m.n), min(m.lo), max(m.hi), sum(m.total)
                              from sample_minutes m join sample_phases p on p.id = m.phase_id
                              join runs r on r.id = m.run_id
                              where m.run_id between %(lo)s and %(hi)s and not p.warmup group by 1, 2, 3, 4, 5
                              on conflict (host_id, experiment, unit, op, hour) do update
                              set n = hh.n + excluded.n, lo = least(hh.lo, excluded.lo),
                                  hi = greatest(hh.hi, excluded.hi), total = hh.total + excluded.total""", p)  # noqa: S608
                c.execute(_summary(), p)  # each run's measured summary, as its end stores it
            done += (hi - lo + 1) * per
            el = time.monotonic() - t0
            say(f"{done:,} samples, {hi:,} runs stored ({done / el:,.0f} samples/s over {el:.0f} s)")
        self._sequences()
        el = time.monotonic() - t0
        self.report["fill_s"] = round(el, 1)
        self.report["fill_samples_per_s"] = round(done / el)

    def _sequences(self) -> None:
        """The ids the fill gave by hand: the sequences go on after them (also after a fill cut short)."""
        for table in ("jobs", "runs", "sample_phases"):
            self.conn.execute(f"select setval('{table}_id_seq', (select max(id) from {table}))")  # noqa: S608

    @staticmethod
    def _rows(run_id: int, at: datetime, host_id: int, per: int) -> str:
        """A run's samples as COPY text: a host's own level, a slow drift over the year and a little noise."""
        rng = random.Random(run_id)  # noqa: S311 - synthetic values
        level = 20.0 + host_id % 17
        drift = 1.0 + 0.05 * ((at.timetuple().tm_yday % 91) / 91.0)
        ts = at.isoformat()
        warm, measured = 2 * run_id, 2 * run_id + 1  # the phases' ids (fill)
        out = io.StringIO()
        for seq in range(per):
            v = level * drift * (1.0 + rng.random() * 0.02)
            phase = warm if seq < WARMUP else measured
            out.write(f"{ts}\t{seq}\t{seq + 0.5}\t1.0\t{v:.4f}\t{ts}\t{run_id}\t1\t{phase}\n")
        return out.getvalue()

    # --- ingest through the real statement -------------------------------------------------------------------
    def ingest_rate(self) -> float:
        from app.runner_api.fast import INGEST, ingest_params

        c = self.conn
        host = c.execute("select id from hosts where name = 'size-1'").fetchone()[0]  # type: ignore[index]
        ids = []
        for _ in range(INGEST_RUNS):
            job = c.execute("insert into jobs (created_at, experiment, params) values (now(), 'memory', '{}') "
                            "returning id").fetchone()[0]  # type: ignore[index]
            ids.append(c.execute("""insert into runs (job_id, host_id, experiment, params, status, attempt,
                                        expected_duration_s, created_at, started_at, cancel_requested, last_seq)
                                    values (%s, %s, 'memory', '{}', 'running', 1, 600, now(), now(), false, -1)
                                    returning id""", (job, host)).fetchone()[0])  # type: ignore[index]
        batches = 0
        t0 = time.monotonic()
        for k in range(-(-self.args.ingest_batches // INGEST_RUNS)):
            for run_id in ids:
                rows = [(k * INGEST_BATCH + i, float(k * INGEST_BATCH + i), 1.0, 4, 0, i < 2 and k == 0,
                         30.0 + i % 7, "GB/s", "read", 1048576) for i in range(INGEST_BATCH)]
                owned, stored, _ = c.execute(INGEST, ingest_params(TOKEN, None, run_id, 1, rows)).fetchone()  # type: ignore[misc]
                assert owned and len(stored) == INGEST_BATCH, (owned, len(stored))
                batches += 1
        el = time.monotonic() - t0
        c.execute("update runs set status = 'succeeded', finished_at = now(), samples_closed = true where id = any(%s)",
                  (ids,))
        return round(batches * INGEST_BATCH / el)

    # --- what it costs ---------------------------------------------------------------------------------------
    def disk(self) -> None:
        c = self.conn
        n = c.execute("select count(*) from samples").fetchone()[0]  # type: ignore[index]

        def size(sql: str) -> int:
            return int(c.execute(sql).fetchone()[0])  # type: ignore[index]

        table = size("select sum(pg_relation_size(inhrelid)) from pg_inherits where inhparent = 'samples'::regclass")
        total = size("select sum(pg_total_relation_size(inhrelid)) from pg_inherits "
                     "where inhparent = 'samples'::regclass")
        phases = size("select pg_total_relation_size('sample_phases')")
        minutes = size("select pg_total_relation_size('sample_minutes')")
        hours = size("select pg_total_relation_size('host_hours')")
        self.report["samples_stored"] = n
        self.report["bytes_per_sample_table"] = round(table / n, 1)
        self.report["bytes_per_sample_table_and_index"] = round(total / n, 1)
        self.report["bytes_per_sample_with_phases"] = round((total + phases) / n, 1)
        self.report["rollup_bytes_per_sample"] = round(minutes / n, 2)
        self.report["host_hours_bytes_per_sample"] = round(hours / n, 3)
        self.report["database_gib"] = round(size("select pg_database_size(current_database())") / 2**30, 2)

    def reads(self) -> None:
        from app.core.db import get_engine
        from app.jobs import samples, service
        from app.jobs.models import Run
        from app.jobs.schemas import RunFilter

        a = self.args
        rng = random.Random(1)  # noqa: S311 - which host and runs are read
        with Session(get_engine()) as session:
            def timed(name: str, fn: Callable[[], Any]) -> None:
                fn()  # once unmeasured: the plan cached, as a running server has it
                times = []
                for _ in range(a.repeat):
                    t0 = time.perf_counter()
                    got = fn()
                    times.append(time.perf_counter() - t0)
                    session.rollback()
                rows = got.data if hasattr(got, "data") else got[0] if isinstance(got, tuple) else got
                self.report[name] = {**_pcts(times), "rows": len(rows)}

            timed("history_first_page", lambda: service.list_runs(session, RunFilter(), 50, 0))
            # a deep page as the History page reads it: by keyset, from the middle of the runs
            deep = (session.scalar(text("select max(id) from runs")) or 0) - self.runs // 2
            timed("history_deep_page", lambda: service.list_runs(session, RunFilter(), 50, before_id=deep))
            timed("history_label_page", lambda: service.list_runs(session, RunFilter(instance_type=TYPES[3]), 50, 0))
            host = int(rng.randint(1, self.hosts))
            timed("host_trend_year", lambda: samples.host_trend(session, host, self.start, self.end, "memory"))
            q_end = self.end - timedelta(days=30)
            timed("report_quarter", lambda: samples.daily(session, q_end - timedelta(days=91), q_end,
                                                          "instance_type", TYPES[5]))

            def one_run() -> list:
                run = session.get(Run, rng.randint(1, self.runs - 2 * INGEST_RUNS))
                return samples.after(session, run, -1, 20000)  # type: ignore[arg-type]
            timed("run_samples", one_run)

    def retention(self) -> None:
        from app.core.config import get_settings
        from app.core.db import get_engine
        from app.jobs import partitions
        from app.worker.retention import prune_samples

        with Session(get_engine()) as session:
            first = partitions.partitions(session)[0]
            n = self.conn.execute(f"select count(*) from {first[0]}").fetchone()[0]  # type: ignore[index]  # noqa: S608
            # the retention that makes exactly the oldest month expire: its end, a day ago
            days = (datetime.now(UTC) - first[2]).total_seconds() / 86400 - 1
            keep = get_settings().sample_retention_days
            get_settings().sample_retention_days = days
            try:
                t0 = time.perf_counter()
                out = prune_samples(session)
                el = time.perf_counter() - t0
            finally:
                get_settings().sample_retention_days = keep
        self.report["retention_month"] = {"s": round(el, 3), "partitions": out.partitions, "samples": n}


def _minute() -> str:
    from app.jobs.samples import MINUTE

    return MINUTE


def _summary() -> str:
    from app.jobs.samples import MEASURED_SUMMARY

    return MEASURED_SUMMARY


def _hour() -> str:
    from app.jobs.samples import HOUR

    return HOUR.format(created_at="r.created_at")
