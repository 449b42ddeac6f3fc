"""Samples by time (issue 31 item 3): the sample table partitioned by month of its run's created_at, narrowed into
sample_phases, the minute rollup written with each batch, retention by whole partitions, and the migration that
moves an existing database's samples (app.jobs.partitions, app.jobs.samples, app.worker.retention, migration
0021). Real PostgreSQL, real runner API."""
import math
import os
import random
import subprocess
import sys
from datetime import UTC, timedelta

import psycopg
from sqlalchemy import func, select, text

from app.core.config import get_settings
from app.core.db import utcnow
from app.jobs import partitions, samples
from app.jobs.models import Run, Sample, SampleMinute
from tests.conftest import ROOT
from tests.test_bounds import _running

FIELDS = "seq, t, interval_s, threads, \"repeat\", warmup, value, unit, op, block_bytes"


def _upload(client, headers, run_id, batch):
    r = client.post(f"/api/runner/runs/{run_id}/samples", json={"attempt": 1, "samples": batch}, headers=headers)
    assert r.status_code == 200, r.text
    return r.json()


def _s(seq, t, value, warmup=False, op=None, block_bytes=None, threads=1, repeat=0, unit="GB/s"):
    return {"seq": seq, "t": t, "interval_s": 1.0, "threads": threads, "repeat": repeat, "warmup": warmup,
            "value": value, "unit": unit, "op": op, "block_bytes": block_bytes}


def test_a_run_s_samples_read_back_whole_and_its_minutes_counted_once(client, session, runner):
    """Phases stored once, every field read back as sent (NULL op apart from ''), and the rollup fed by the rows a
    batch inserted: a resent batch adds nothing."""
    host_id, headers = runner
    run_id = _running(client, session, host_id, headers)
    sent = [_s(i, 10.0 + i * 7.5, float(i % 13) + 0.25, warmup=i < 3, op=("read", "", None)[i % 3],
               block_bytes=(4096, None)[i % 2], repeat=i // 20) for i in range(40)]
    assert _upload(client, headers, run_id, sent[:25])["inserted"] == 25
    again = _upload(client, headers, run_id, sent[20:])  # five resent
    assert again["inserted"] == 15 and again["conflicts"] == []
    assert _upload(client, headers, run_id, sent[:10])["inserted"] == 0
    got = client.get(f"/api/runs/{run_id}/samples?limit=1000").json()["data"]
    assert got == sent
    phases = session.scalar(text("select count(*) from sample_phases where run_id = :r"), {"r": run_id})
    assert phases == len({(s["warmup"], s["op"], s["block_bytes"], s["repeat"]) for s in sent}) < len(sent)
    # the rollup: per phase and minute of t, exactly the samples stored
    want: dict[tuple, list[float]] = {}
    for s in sent:
        want.setdefault((s["warmup"], s["op"], s["block_bytes"], s["repeat"], int(s["t"] // 60)), []).append(s["value"])
    rows = session.execute(text(
        "select p.warmup, p.op, p.block_bytes, p.\"repeat\", m.minute, m.n, m.lo, m.hi, m.total "
        "from sample_minutes m join sample_phases p on p.id = m.phase_id where m.run_id = :r"), {"r": run_id}).all()
    assert {r[:5]: (r[5], r[6], r[7], r[8]) for r in rows} == {
        k: (len(v), min(v), max(v), sum(v)) for k, v in want.items()}
    # what a long-range chart reads: the measured samples' minutes, phases of a minute together
    run = session.get(Run, run_id)
    measured = [s for s in sent if not s["warmup"]]
    by_minute: dict[int, list[float]] = {}
    for s in measured:
        by_minute.setdefault(int(s["t"] // 60), []).append(s["value"])
    assert [(m, lo, round(mean, 9), hi, n) for _, m, lo, mean, hi, n in samples.minutes(session, [run_id])] == [
        (m, min(v), round(sum(v) / len(v), 9), max(v), len(v)) for m, v in sorted(by_minute.items())]
    assert samples.measured(session, run) == [(s["t"], s["value"]) for s in measured]
    # the host's hour of its runs' measured samples, per figure (op '' for none), counted once as well
    by_op: dict[str, list[float]] = {}
    for s in measured:
        by_op.setdefault(s["op"] or "", []).append(s["value"])
    hour = run.created_at.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    trend = samples.host_trend(session, host_id, hour, hour + timedelta(hours=1), run.experiment)
    assert [(h, e, u, o, lo, round(mean, 9), hi, n) for h, e, u, o, lo, mean, hi, n in trend] == [
        (hour, run.experiment, "GB/s", o, min(v), round(sum(v) / len(v), 9), max(v), len(v))
        for o, v in sorted(by_op.items())]
    assert samples.host_trend(session, host_id, hour + timedelta(hours=1), hour + timedelta(days=365)) == []
    # the export carries the same fields
    csv = client.get(f"/api/runs/{run_id}/export?format=json").json()
    assert csv["samples"] == sent


def test_a_run_s_measured_summary_is_stored_when_it_ends_and_counts_a_late_batch(client, session, runner):
    """What a report reads (samples.daily): a run's measured summary (count, min, max and sum of its measured
    samples, every phase's) stored on the run when it ends, not before; a batch stored after its end (a runner
    uploading its backlog) counts too."""
    host_id, headers = runner
    session.execute(text("""update hosts set labels = '{"instance_type": "t-summary"}' where id = :h"""),
                    {"h": host_id})
    session.commit()
    run_id = _running(client, session, host_id, headers)
    sent = [_s(i, 10.0 + i * 20.0, float(i % 9) + 0.5, warmup=i < 4, op=("read", "write")[i % 2], repeat=i // 10)
            for i in range(30)]
    _upload(client, headers, run_id, sent)
    run = session.get(Run, run_id)
    day = run.created_at.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)

    def stored() -> tuple:
        session.expire_all()
        got = session.get(Run, run_id)
        return got.measured_n, got.measured_lo, got.measured_hi, got.measured_total

    def report() -> list[tuple]:
        return [(d, lo, round(mean, 9), hi, n) for d, lo, mean, hi, n in
                samples.daily(session, day - timedelta(days=1), day + timedelta(days=2), "instance_type", "t-summary")]

    assert stored() == (None, None, None, None) and report() == []  # not ended: not counted yet
    r = client.post(f"/api/runner/runs/{run_id}/finish", headers=headers,
                    json={"attempt": 1, "status": "failed", "reason": "ended by the test"})
    assert r.status_code == 200, r.text
    values = [x["value"] for x in sent if not x["warmup"]]
    assert stored() == (len(values), min(values), max(values), sum(values))
    assert report() == [(day, min(values), round(sum(values) / len(values), 9), max(values), len(values))]
    late = [_s(30 + i, 700.0 + i, 100.0 + i) for i in range(3)]
    assert _upload(client, headers, run_id, late)["inserted"] == 3
    values += [x["value"] for x in late]
    assert stored() == (len(values), min(values), max(values), sum(values))
    assert report() == [(day, min(values), round(sum(values) / len(values), 9), max(values), len(values))]


def test_a_sample_of_a_month_without_partition_is_kept_and_moves_when_its_month_is_made(client, session, runner):
    host_id, headers = runner
    run_id = _running(client, session, host_id, headers)
    long_ago = utcnow().replace(year=2001, month=3, day=15)
    session.execute(Run.__table__.update().where(Run.id == run_id).values(created_at=long_ago))
    session.commit()
    assert _upload(client, headers, run_id, [_s(0, 1.0, 5.0), _s(1, 2.0, 6.0)])["inserted"] == 2
    assert session.scalar(text("select count(*) from samples_default")) == 2  # no partition: the default took them
    assert partitions.ensure(session, long_ago, long_ago) == ["samples_2001_03"]
    assert session.scalar(text("select count(*) from samples_default")) == 0
    assert session.scalar(text("select count(*) from samples_2001_03")) == 2
    assert [s.value for s in samples.after(session, session.get(Run, run_id), -1, 10)] == [5.0, 6.0]
    # beat's task: this month and AHEAD_MONTHS more exist (the migration made them; none is missing)
    made = partitions.ensure_ahead(session, utcnow() + timedelta(days=31 * 12))
    assert len(made) == partitions.AHEAD_MONTHS + 1
    assert partitions.ensure_ahead(session, utcnow() + timedelta(days=31 * 12)) == []


def test_retention_drops_expired_months_whole_and_keeps_a_running_run_s(client, session, runner, monkeypatch):
    from app.worker.tasks import prune_samples

    host_id, headers = runner
    now = utcnow()
    old_at = partitions.month_start(now - timedelta(days=430)) + timedelta(days=3)  # its month ended > 365 days ago
    active_at = partitions.month_start(old_at - timedelta(days=10)) + timedelta(days=3)  # the month before
    stray_at = now.replace(year=2001, month=5, day=2)  # a month with no partition: the default partition

    def made(at, n, end=True):  # one run at a time on the host: each ended before the next, but the last
        run_id = _running(client, session, host_id, headers)
        if at is not None:
            session.execute(Run.__table__.update().where(Run.id == run_id).values(created_at=at))
            session.commit()
        _upload(client, headers, run_id, [_s(i, float(i), 1.0 + i) for i in range(n)])
        if end:
            assert client.post(f"/api/runs/{run_id}/cancel").status_code == 202
        return run_id

    old = made(old_at, 3)
    stray = made(stray_at, 12)
    recent = made(None, 1)
    active = made(active_at, 1, end=False)
    session.execute(Run.__table__.update().where(Run.id.in_([old, stray])).values(finished_at=now - timedelta(days=400)))
    session.commit()
    assert partitions.ensure(session, active_at, old_at) != []
    monkeypatch.setattr(get_settings(), "sample_retention_batch", 5)
    assert get_settings().sample_retention_days == 365  # the default
    out = prune_samples()
    # the old run's month dropped whole; the running run's month kept; the default partition's 12 rows in batches
    # (an empty expired month another test made may go too)
    assert partitions.name_of(old_at) in out["partitions"] and partitions.name_of(active_at) not in out["partitions"]
    assert out["rows"] == 12
    left = dict(session.execute(select(Sample.run_id, func.count()).group_by(Sample.run_id)).all())
    assert left == {recent: 1, active: 1}
    assert session.get(Run, old).status == "cancelled"  # the run itself stays, and its minute rollup
    assert session.get(Run, old).measured_n == 3  # and its measured summary (what reports read)
    assert session.scalar(select(func.sum(SampleMinute.n)).where(SampleMinute.run_id == old)) == 3
    monkeypatch.setattr(get_settings(), "sample_retention_days", 0)  # 0 keeps everything
    session.execute(Run.__table__.update().where(Run.id == recent).values(finished_at=now - timedelta(days=999)))
    session.commit()
    assert prune_samples() == {"partitions": [], "rows": 0}


def _alembic(url: str, *args: str) -> None:
    env = dict(os.environ, DATABASE_URL=url)
    r = subprocess.run([sys.executable, "-m", "alembic", "-c", str(ROOT / "migrations" / "alembic.ini"), *args],
                       cwd=ROOT / "backend", capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-2000:]


def test_the_migration_moves_every_sample_equal():
    """A database at revision 0016 (one sample table, a row per sample with its constants) holding samples of
    several runs and attempts, NULL and non-NULL ops and block sizes: migrated to the head, every sample is there,
    equal field by field and with its id; the rollup counts them all; the next sample's id is larger."""
    base = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
    name = f"hb_migrate_{os.environ.get('PYTEST_XDIST_WORKER', 'x')}"
    admin = base.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'drop database if exists "{name}" with (force)')
        conn.execute(f'create database "{name}"')
    url = f"{base}/{name}"
    dsn = url.replace("postgresql+psycopg://", "postgresql://")
    try:
        _alembic(url, "upgrade", "0016")
        rng = random.Random(31)
        with psycopg.connect(dsn) as conn:
            conn.execute("insert into hosts (name, hostname, runner_version, token_hash, registered_at, inventory, "
                         "labels) values ('h', 'h', '0', 'x', now(), '{}', '{}')")
            conn.execute("insert into jobs (created_at, experiment, params) values (now(), 'memory', '{}')")
            old = []
            for run in range(1, 7):
                created = utcnow() - timedelta(days=rng.randint(0, 500))
                conn.execute("insert into runs (job_id, host_id, experiment, params, status, attempt, "
                             "expected_duration_s, created_at, cancel_requested, last_seq) values "
                             "(1, 1, 'memory', '{}', %s, 2, 1, %s, false, 0)",
                             ("running" if run == 6 else "succeeded", created))
                for attempt in (1, 2):
                    for seq in range(rng.randint(1, 150)):
                        old.append((run, attempt, seq, rng.uniform(-5, 400), rng.choice([1.0, 0.999]),
                                    rng.choice([1, 4]), rng.randint(0, 2), seq < 4, rng.uniform(0, 1e12),
                                    rng.choice(["GB/s", "IOPS"]), rng.choice([None, "read", ""]),
                                    rng.choice([None, 4096, 1 << 40]), created + timedelta(seconds=seq)))
            with conn.cursor() as cur:
                cur.executemany(f"insert into samples (run_id, attempt, {FIELDS}, received_at) values "
                                "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", old)
            before = conn.execute(f"select id, run_id, attempt, {FIELDS}, received_at from samples order by id").fetchall()
        _alembic(url, "upgrade", "head")
        with psycopg.connect(dsn) as conn:
            after = conn.execute(f"select s.id, s.run_id, s.attempt, {samples.SAMPLE_COLUMNS}, s.received_at "
                                 f"from {samples.SAMPLE_FROM} order by s.id").fetchall()
            assert len(after) == len(before) == len(old)
            assert after == before
            assert conn.execute("select sum(n) from sample_minutes").fetchone()[0] == len(old)
            # the hosts' hours (migration 0024) from the rollup: every measured sample of the runs' every attempt
            assert conn.execute("select sum(n) from host_hours").fetchone()[0] == sum(1 for o in old if not o[7])
            assert conn.execute("select count(*) from samples_default").fetchone()[0] == 0  # each in its month
            # each ended run's measured summary (migration 0028) from the rollup: every attempt's measured samples;
            # none for the running one (it gets it when it ends)
            got = {r[0]: r[1:] for r in conn.execute("select id, measured_n, measured_lo, measured_hi, measured_total "
                                                     "from runs")}
            assert got.pop(6) == (None, None, None, None) and len(got) == 5
            for run in got:
                values = [o[8] for o in old if o[0] == run and not o[7]]
                n, lo, hi, total = got[run]
                assert (n, lo, hi) == (len(values), min(values), max(values)) and math.isclose(total, sum(values)), run
            # one phase per distinct constants (None apart from ''), however many samples share them
            assert conn.execute("select count(*) from sample_phases").fetchone()[0] == len(
                {(o[0], o[1], o[5], o[6], o[7], o[9], o[10], o[11]) for o in old})
            top = conn.execute("select nextval('samples_id_seq')").fetchone()[0]
            assert top > before[-1][0]
        _alembic(url, "downgrade", "0018")  # and 0021 back (by name: later revisions may follow it): the old table
        with psycopg.connect(dsn) as conn:
            assert conn.execute(f"select id, run_id, attempt, {FIELDS}, received_at from samples "
                                "order by id").fetchall() == before
        # every later revision goes back and forth too (0022's constraint once failed to drop by its name)
        _alembic(url, "downgrade", "0016")
        _alembic(url, "upgrade", "head")
        with psycopg.connect(dsn) as conn:
            assert conn.execute("select count(*) from samples").fetchone()[0] == len(old)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')


def test_the_size_run_small(tmp_path):
    """`./hostbench size` at a CI size on a database of its own: it fills, measures every figure and drops the oldest
    month; its JSON line says so (the full size is run by hand: docs/scaling.md)."""
    import json

    base = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
    name = f"hb_size_{os.environ.get('PYTEST_XDIST_WORKER', 'x')}"
    admin = base.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'drop database if exists "{name}" with (force)')
        conn.execute(f'create database "{name}"')
    try:
        out = subprocess.run([sys.executable, "-m", "hostbench_cli", "size", "--runs", "300", "--samples-per-run", "20",
                              "--days", "150", "--chunk-runs", "100", "--repeat", "2", "--ingest-batches", "20",
                              "--database-url", f"{base}/{name}"], cwd=ROOT, capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        r = json.loads(out.stdout.strip().splitlines()[-1])
        ingest = 2 * 20 * 60  # 20 batches of 60, empty and at size
        assert r["samples_stored"] == 300 * 20 + ingest
        assert r["ingest_empty_samples_per_s"] > 0 and r["ingest_at_size_samples_per_s"] > 0
        for read in ("history_first_page", "history_deep_page", "history_label_page", "run_samples"):
            assert r[read]["rows"] > 0 and 0 < r[read]["p50_ms"] <= r[read]["p95_ms"], (read, r[read])
        assert r["host_trend_year"]["rows"] > 0 and r["report_quarter"]["rows"] > 0
        assert len(r["retention_month"]["partitions"]) == 1 and r["retention_month"]["samples"] > 0
        assert 40 < r["bytes_per_sample_table"] < r["bytes_per_sample_table_and_index"]
        assert out.stdout.count("\n") > 10  # the table before the JSON line
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'drop database if exists "{name}" with (force)')


def test_a_report_over_a_quarter_reads_its_runs_alone(session):
    """A quarter's report (samples.daily) reads the stored summaries of the quarter's runs (under the label: one
    range of its report index), never the phases or the minute rollup, and answers what the rollup gives: the old
    computation (the plain join of rollup, runs and phases) on 20,000 runs over a year, ten hosts of ten instance
    types, EXPLAIN ANALYZE of the one statement it ran."""
    from sqlalchemy import event

    from app.core.db import get_engine

    session.execute(text("""insert into hosts (name, hostname, runner_version, token_hash, registered_at, inventory,
                                               labels)
                            select 'h' || i, 'h' || i || '.local', '0', md5('h' || i), now(), '{}',
                                   jsonb_build_object('instance_type', 'type-' || i)
                            from generate_series(0, 9) i"""))
    job = session.scalar(text("select coalesce(max(id), 0) + 1 from jobs"))
    session.execute(text("insert into jobs (created_at, experiment, params) "
                         "select now() - (20000 - i) * interval '26 minutes', 'memory', '{}' "
                         "from generate_series(1, 20000) i"))
    first = session.scalar(text("select coalesce(max(id), 0) + 1 from runs"))
    session.execute(text("""insert into runs (job_id, host_id, experiment, params, status, attempt,
                                              expected_duration_s, created_at, cancel_requested, last_seq,
                                              labels_snapshot)
                            select j.id, h.id, 'memory', '{}', 'succeeded', 1, 100, j.created_at, false, 99, h.labels
                            from jobs j join hosts h on h.name = 'h' || j.id % 10
                            where j.id >= :job"""), {"job": job})
    last = session.scalar(text("select max(id) from runs"))
    # two phases a run (warm-up, measured), a minute of warm-up and two measured minutes
    session.execute(text("""insert into sample_phases (run_id, attempt, threads, "repeat", warmup, unit)
                            select r.id, 1, 1, 0, w, 'GB/s' from runs r, (values (true), (false)) w(w)
                            where r.id >= :first"""), {"first": first})
    session.execute(text("""insert into sample_minutes (run_id, phase_id, minute, n, lo, hi, total)
                            select p.run_id, p.id, m, 30, p.run_id % 7 + m, p.run_id % 7 + m + 2,
                                   30 * (p.run_id % 7 + m + 1) + (case when p.warmup then 1000 else 0 end)
                            from sample_phases p, generate_series(0, 1) m
                            where (m = 0 or not p.warmup) and p.run_id >= :first"""), {"first": first})
    # their summaries as a run's end stores them (app.jobs.service.finish_run), all at once
    session.connection().exec_driver_sql(samples.MEASURED_SUMMARY, {"lo": first, "hi": last})
    session.commit()
    with get_engine().connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        # twice: the first removes the row versions the summaries' update left, the second marks their pages
        # all-visible (as autovacuum does in time), which an index-only scan needs
        conn.exec_driver_sql("vacuum analyze runs")
        conn.exec_driver_sql("vacuum analyze")
    until = utcnow() - timedelta(days=30)
    since = until - timedelta(days=91)
    session.execute(text("set local timezone = 'Asia/Kolkata'"))  # a UTC day still (it was the session's day)
    plain = """
        select date_trunc('day', r.created_at, 'UTC'), min(m.lo), sum(m.total) / sum(m.n), max(m.hi), sum(m.n)
        from sample_minutes m join runs r on r.id = m.run_id join sample_phases p on p.id = m.phase_id
        where r.created_at >= :since and r.created_at < :until and not p.warmup {label} group by 1 order by 1"""
    for label, index, scan in (("type-3", "ix_runs_report_instance_type", ("Index Only Scan",)),
                               (None, "ix_runs_report", ("Index Only Scan",))):
        old = session.execute(text(plain.format(label="and r.labels_snapshot ->> 'instance_type' = :v" if label
                                                else "")), {"since": since, "until": until, "v": label}).all()
        statements: list[tuple[str, object]] = []

        def record(conn, cursor, statement, parameters, context, executemany, statements=statements):  # noqa: ANN001, ANN202
            statements.append((statement, parameters))

        event.listen(get_engine(), "before_cursor_execute", record)
        try:
            got = (samples.daily(session, since, until, "instance_type", label) if label
                   else samples.daily(session, since, until))
        finally:
            event.remove(get_engine(), "before_cursor_execute", record)
        assert len(got) >= 90 and [tuple(r) for r in got] == [tuple(r) for r in old], label
        runs = session.scalar(text(f"""select count(*) from runs r where r.created_at >= :since
                                       and r.created_at < :until and r.measured_n is not null
                                       {"and r.labels_snapshot ->> 'instance_type' = :v" if label else ""}"""),
                              {"since": since, "until": until, "v": label})
        assert len(statements) == 1
        plan = session.connection().exec_driver_sql(f"explain (analyze, format json) {statements[0][0]}",
                                                    statements[0][1]).scalar()
        nodes = list(_nodes(plan[0]["Plan"]))
        assert {n.get("Relation Name") for n in nodes} <= {None, "runs"}, plan  # no phases, no rollup
        reads = [n for n in nodes if n.get("Index Name") == index]
        assert len(reads) == 1 and reads[0]["Node Type"] in scan, plan
        assert reads[0]["Actual Rows"] == runs, (runs, plan)  # the quarter's runs (under the label): of 20,000
    session.rollback()


def _nodes(node: dict):  # noqa: ANN202 - a plan node and every node under it
    yield node
    for child in node.get("Plans", []):
        yield from _nodes(child)
