"""The sample table's monthly partitions (PostgreSQL declarative partitioning, any 14+; no extension).

`samples` is partitioned by RANGE (run_at), run_at being the run's created_at: all of a run's samples lie in one
partition, whenever they arrive, so the unique key (run_id, attempt, seq, run_at) that makes ingest idempotent
holds across the whole table. Each month has its partition `samples_YYYY_MM`, created ahead by Celery beat
(`hostbench.sample_partitions`, hourly, AHEAD_MONTHS ahead) and by the migration; `samples_default` takes any row
of a month without one, so that an insert never fails for lack of a partition. When a month's partition is created
later, the rows the default partition holds for it move into it in the same transaction.

Retention (app.worker.retention) drops whole partitions. Only this module names partitions."""
import re
from datetime import UTC, datetime

from sqlalchemy import text
from sqlalchemy.orm import Session

AHEAD_MONTHS = 3
DEFAULT = "samples_default"
_NAME = re.compile(r"^samples_(\d{4})_(\d{2})$")


def month_start(d: datetime) -> datetime:
    d = d.astimezone(UTC)
    return datetime(d.year, d.month, 1, tzinfo=UTC)


def next_month(d: datetime) -> datetime:
    return datetime(d.year + d.month // 12, d.month % 12 + 1, 1, tzinfo=UTC)


def name_of(lo: datetime) -> str:
    return f"samples_{lo.year:04d}_{lo.month:02d}"


def partitions(session: Session) -> list[tuple[str, datetime, datetime]]:
    """The monthly partitions attached now, oldest first, as (name, from, to)."""
    names = session.scalars(text(
        "select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid "
        "where i.inhparent = 'samples'::regclass")).all()
    out = []
    for n in names:
        m = _NAME.match(n)
        if m:
            lo = datetime(int(m[1]), int(m[2]), 1, tzinfo=UTC)
            out.append((n, lo, next_month(lo)))
    return sorted(out, key=lambda p: p[1])


def ensure(session: Session, start: datetime, end: datetime) -> list[str]:
    """Every month from start's to end's has its partition; returns those created. Each in its own short
    transaction (committed here)."""
    have = {n for n, _, _ in partitions(session)}
    made = []
    lo = month_start(start)
    while lo <= end:
        hi = next_month(lo)
        name = name_of(lo)
        if name not in have:
            _create(session, name, lo, hi)
            made.append(name)
        lo = hi
    return made


def ensure_ahead(session: Session, now: datetime | None = None) -> list[str]:
    """Beat's task: this month and the next AHEAD_MONTHS have partitions."""
    now = now or datetime.now(UTC)
    end = now
    for _ in range(AHEAD_MONTHS):
        end = next_month(month_start(end))
    return ensure(session, now, end)


def _create(session: Session, name: str, lo: datetime, hi: datetime) -> None:
    bounds = {"lo": lo, "hi": hi}
    # the lock first: no row can reach the default partition for this month while it is being moved out
    session.execute(text("set local lock_timeout = '10s'"))
    session.execute(text(f"lock table {DEFAULT} in share row exclusive mode"))
    # names made here (name_of, DEFAULT), values bound
    stray = session.scalar(text(f"select exists (select 1 from {DEFAULT} "  # noqa: S608
                                "where run_at >= :lo and run_at < :hi)"), bounds)
    if not stray:
        session.execute(text(f"create table {name} partition of samples for values from ('{lo.isoformat()}') "
                             f"to ('{hi.isoformat()}')"))
    else:  # a month the beat did not create in time: its rows leave the default partition, then it is attached
        session.execute(text(f"create table {name} (like samples including defaults)"))
        session.execute(text(f"with moved as (delete from {DEFAULT} where run_at >= :lo and run_at < :hi "  # noqa: S608
                             f"returning *) insert into {name} select * from moved"), bounds)
        session.execute(text(f"alter table samples attach partition {name} for values from ('{lo.isoformat()}') "
                             f"to ('{hi.isoformat()}')"))
    session.commit()
