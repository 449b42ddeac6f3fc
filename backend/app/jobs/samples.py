"""How a run's samples are read back whole from their narrowed storage (app.jobs.models: Sample rows name a
SamplePhase, which holds what is constant over a stretch of them), and the minute rollup's key. One definition,
used by every reader (the run page, live stream backlog, export, reports, a run's finish) and by the ingest
statement (app.runner_api.fast)."""
from datetime import datetime

from sqlalchemy import BigInteger, Select, cast, func, select, true
from sqlalchemy.orm import Session

from app.jobs.models import HostHour, Run, Sample, SampleMinute, SamplePhase, snapshot_label
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
    """A period's summary from the rollup (a report over a quarter): per UTC day, the min, mean and max of the
    measured samples of runs created then, and their count; only runs handed out under label=value if given (label
    one of app.jobs.models.LABEL_KEYS, matched through its index).

    Read run by run: the period's runs (under the label) from their indexes, then each one's measured phases (a
    range of the phases' key, which starts with the run), then each phase's rows of the rollup (a range of its
    primary key). The LATERALs' aggregates keep it so: as a plain join PostgreSQL hashed the runs and read the
    whole rollup to match them, every run's of every month it holds (the rollup outlives the samples): at a million
    runs three million rows for a quarter's 25,000 runs."""
    per_phase = (select(func.min(SampleMinute.lo).label("lo"), func.sum(SampleMinute.total).label("total"),
                        func.max(SampleMinute.hi).label("hi"), func.sum(SampleMinute.n).label("n"))
                 .where(SampleMinute.run_id == SamplePhase.run_id, SampleMinute.phase_id == SamplePhase.id)
                 .lateral("per_phase"))
    per_run = (select(func.min(per_phase.c.lo).label("lo"), func.sum(per_phase.c.total).label("total"),
                      func.max(per_phase.c.hi).label("hi"), func.sum(per_phase.c.n).label("n"))
               .select_from(SamplePhase).join(per_phase, true())
               .where(SamplePhase.run_id == Run.id, SamplePhase.warmup.is_(False))
               .lateral("per_run"))
    day = func.date_trunc("day", Run.created_at, "UTC")  # as HOUR: a UTC day whatever the session's time zone
    q = (select(day, func.min(per_run.c.lo), func.sum(per_run.c.total) / func.sum(per_run.c.n),
                func.max(per_run.c.hi), cast(func.sum(per_run.c.n), BigInteger))
         .select_from(Run).join(per_run, true())
         .where(Run.created_at >= since, Run.created_at < until, per_run.c.n.is_not(None)))
    if label is not None:
        q = q.where(snapshot_label(label) == value)
    return [tuple(r) for r in session.execute(q.group_by(day).order_by(day))]  # type: ignore[misc]
