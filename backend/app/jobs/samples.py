"""How a run's samples are read back whole from their narrowed storage (app.jobs.models: Sample rows name a
SamplePhase, which holds what is constant over a stretch of them), and the minute rollup's key. One definition,
used by every reader (the run page, live stream backlog, export, reports, a run's finish) and by the ingest
statement (app.runner_api.fast); and a run's measured summary, stored when it ends, which reports read."""
from datetime import datetime

from sqlalchemy import BigInteger, Select, cast, func, select
from sqlalchemy.orm import Session

from app.jobs.models import SUMMARY_COLUMNS, HostHour, Run, Sample, SampleMinute, SamplePhase, snapshot_label
from app.jobs.schemas import SAMPLE_FIELDS, SamplePublic

# t's minute as the rollup keys it, clamped into an integer (t is any finite double a runner sent)
MINUTE = "cast(least(greatest(floor(t / 60), -2147483648), 2147483647) as integer)"

# a run's hour as the host's hourly rollup (host_hours) keys it: its created_at's, in UTC
HOUR = "date_trunc('hour', {created_at}, 'UTC')"

# The same, as raw SQL for the ingest and conflict checks: a sample's public fields in SAMPLE_FIELDS order.
_WHERE = {"seq": "s", "t": "s", "interval_s": "s", "value": "s", "threads": "p", "repeat": "p", "warmup": "p",
          "unit": "p", "op": "p", "block_bytes": "p"}
SAMPLE_COLUMNS = ", ".join(f'{_WHERE[f]}."{f}"' for f in SAMPLE_FIELDS)
SAMPLE_FROM = "samples s join sample_phases p on p.id = s.phase_id"


# A run's measured summary: the count, min, max and sum of its measured (not warm-up) samples, every attempt's, from
# the minute rollup (per phase and minute), for the runs with ids in [lo, hi] that have any; stored on the run
# (Run.measured_*: MEASURED_SUMMARY, store_summary), what a report reads (daily). The rollup outlives the samples, so
# a summary made after retention dropped them is the same.
SUMMARY_OF = """
select m.run_id, sum(m.n) as n, min(m.lo) as lo, max(m.hi) as hi, sum(m.total) as total
from sample_minutes m join sample_phases p on p.id = m.phase_id
where m.run_id between %(lo)s and %(hi)s and not p.warmup group by m.run_id"""
MEASURED_SUMMARY = f"""
update runs set {", ".join(f"{c} = s.{c.removeprefix('measured_')}" for c in SUMMARY_COLUMNS)}
from ({SUMMARY_OF}) s where runs.id = s.run_id"""  # noqa: S608 - this module's constants

# One run's summary is made after its row is locked, in the same transaction: the summary's statement then reads every
# batch committed before it (READ COMMITTED: its snapshot is taken after the lock), and a batch that comes later waits
# for the transaction and then finds the run ended (app.runner_api.fast.ingest stores the summary again, so).
LOCK_RUN = "select 1 from runs where id = %(lo)s for update"
STORE_SUMMARY = (LOCK_RUN, MEASURED_SUMMARY)  # one run's, lo = hi = its id


def store_summary(session: Session, run: Run) -> None:
    """Set the run's measured summary as it ends (written with the end's own update of the run), made as
    STORE_SUMMARY makes it."""
    conn = session.connection()
    conn.exec_driver_sql(LOCK_RUN, {"lo": run.id})
    row = conn.exec_driver_sql(SUMMARY_OF, {"lo": run.id, "hi": run.id}).first()
    if row is not None:
        for column, value in zip(SUMMARY_COLUMNS, row[1:], strict=True):
            setattr(run, column, value)


def _column(f: str):  # noqa: ANN202 - a column of either model
    return getattr(Sample if _WHERE[f] == "s" else SamplePhase, f)


def public_select() -> Select:
    """SELECT the public fields of samples (joined to their phases), in SAMPLE_FIELDS order."""
    return select(*(_column(f) for f in SAMPLE_FIELDS)).join(SamplePhase, SamplePhase.id == Sample.phase_id)


def after(session: Session, run: Run, after_seq: int, limit: int) -> list[SamplePublic]:
    """The run's current attempt's samples after after_seq, in seq order, at most limit."""
    q = (public_select().where(Sample.run_id == run.id, Sample.attempt == run.attempt, Sample.seq > after_seq)
         .order_by(Sample.seq).limit(limit))
    return [SamplePublic(**dict(zip(SAMPLE_FIELDS, row, strict=True))) for row in session.execute(q)]


def measured(session: Session, run: Run) -> list[tuple[float, float]]:
    """(t, value) of the run's current attempt's measured (not warm-up) samples, in seq order."""
    q = (select(Sample.t, Sample.value).join(SamplePhase, SamplePhase.id == Sample.phase_id)
         .where(Sample.run_id == run.id, Sample.attempt == run.attempt, SamplePhase.warmup.is_(False))
         .order_by(Sample.seq))
    return [(t, v) for t, v in session.execute(q)]


def minutes(session: Session, run_ids: list[int]) -> list[tuple[int, int, float, float, float, int]]:
    """The minute rollup of these runs' measured samples: (run_id, minute, min, mean, max, count), per run in minute
    order, phases of one minute together (what a long-range chart plots: never the per-second rows)."""
    q = (select(SampleMinute.run_id, SampleMinute.minute, func.min(SampleMinute.lo),
                func.sum(SampleMinute.total) / func.sum(SampleMinute.n), func.max(SampleMinute.hi),
                func.sum(SampleMinute.n))
         .join(SamplePhase, SamplePhase.id == SampleMinute.phase_id)
         .where(SampleMinute.run_id.in_(run_ids), SamplePhase.warmup.is_(False))
         .group_by(SampleMinute.run_id, SampleMinute.minute).order_by(SampleMinute.run_id, SampleMinute.minute))
    return [(r, m, lo, mean, hi, n) for r, m, lo, mean, hi, n in session.execute(q)]


def host_trend(session: Session, host_id: int, since: datetime, until: datetime, experiment: str | None = None
               ) -> list[tuple[datetime, str, str, str, float, float, float, int]]:
    """A host's long-range chart from its hourly rollup (host_hours): per hour in [since, until) that had runs,
    and figure (experiment, unit, op; '' when none), (hour, experiment, unit, op, min, mean, max, count) of the
    measured samples of the runs created then, in figure then time order. Only experiment's if given. One index
    range of at most 8,760 rows a figure a year, whatever the fleet stored."""
    q = (select(HostHour.hour, HostHour.experiment, HostHour.unit, HostHour.op, HostHour.lo,
                HostHour.total / HostHour.n, HostHour.hi, HostHour.n)
         .where(HostHour.host_id == host_id, HostHour.hour >= since, HostHour.hour < until))
    if experiment is not None:
        q = q.where(HostHour.experiment == experiment)
    q = q.order_by(HostHour.experiment, HostHour.unit, HostHour.op, HostHour.hour)
    return [tuple(r) for r in session.execute(q)]  # type: ignore[misc]


def daily(session: Session, since: datetime, until: datetime, label: str | None = None, value: str | None = None
          ) -> list[tuple[datetime, float, float, float, int]]:
    """A period's summary (a report over a quarter): per UTC day, the min, mean and max of the measured samples of
    runs created then, and their count; only runs handed out under label=value if given (label one of
    app.jobs.models.LABEL_KEYS).

    Read from the runs alone: each ended run's measured summary (Run.measured_*, stored when it ends:
    store_summary), the period's runs from one range of ix_runs_report_<label> (label, created_at), or of the
    covering ix_runs_report (created_at) without a label. A run with no summary (not ended, no measured sample) is
    not counted. Before (migration 0028) each run's measured phases and each phase's rows of the minute rollup were
    read per run: two index ranges for each of a quarter's 25,000 runs under a label at a million runs."""
    day = func.date_trunc("day", Run.created_at, "UTC")  # as HOUR: a UTC day whatever the session's time zone
    q = (select(day, func.min(Run.measured_lo), func.sum(Run.measured_total) / func.sum(Run.measured_n),
                func.max(Run.measured_hi), cast(func.sum(Run.measured_n), BigInteger))
         .where(Run.created_at >= since, Run.created_at < until, Run.measured_n.is_not(None)))
    if label is not None:
        q = q.where(snapshot_label(label) == value)
    return [tuple(r) for r in session.execute(q.group_by(day).order_by(day))]  # type: ignore[misc]
