"""Sample retention (docs/reliability.md, rule 8): the per-second samples of runs that finished more than
Settings.sample_retention_days ago go; the run row, its computed result (statistics, peaks, validity), its minute
rollup (sample_minutes, what long-range charts read) and its audit trail stay. Only a finished run's samples ever
go, never those of a run still queued, dispatched or running.

The sample table is partitioned by month of its runs' created_at (app.jobs.partitions): a month's partition is
dropped whole (detached, then dropped: a short lock of the parent, no row-by-row delete, no bloat) once the month
is over by more than the retention and every run created in it finished before the retention's cut-off. Rows in
the default partition (months the beat had not created in time) are deleted as before, in batches of
Settings.sample_retention_batch, each batch its own short transaction."""
import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, exists, or_, select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from app.core.config import get_settings
from app.core.db import utcnow
from app.jobs import partitions
from app.jobs.models import TERMINAL, Run

log = logging.getLogger("hostbench.retention")

# One call deletes at most this many batches from the default partition; the next beat goes on where it stopped.
MAX_BATCHES_PER_CALL = 20
# A partition's detach waits at most this long for the table's lock (behind a long read, say); the next beat tries
# again rather than queue the runners' inserts behind it.
DETACH_LOCK_TIMEOUT = "2s"

# One batch of the default partition's expired rows (a name made here, values bound).
_DEFAULT_BATCH = (f"delete from {partitions.DEFAULT} where ctid = any(array(select ctid from {partitions.DEFAULT} "  # noqa: S608
                  "where run_id in (select id from runs where status = any(:terminal) and finished_at < :cutoff) "
                  "limit :batch))")


@dataclass
class Pruned:
    partitions: list[str]  # the monthly partitions dropped
    rows: int  # the rows deleted from the default partition


def prune_samples(session: Session) -> Pruned:
    """Drop expired months' partitions and delete expired rows of the default partition."""
    s = get_settings()
    out = Pruned([], 0)
    if s.sample_retention_days <= 0:
        return out
    cutoff = utcnow() - timedelta(days=s.sample_retention_days)
    for name, lo, hi in partitions.partitions(session):
        if hi > cutoff:
            break  # oldest first: the rest are newer
        unfinished = session.scalar(select(exists().where(
            Run.created_at >= lo, Run.created_at < hi,
            or_(Run.status.not_in(TERMINAL), Run.finished_at.is_(None), Run.finished_at >= cutoff))))
        if unfinished:
            continue
        try:
            session.execute(text(f"set local lock_timeout = '{DETACH_LOCK_TIMEOUT}'"))
            session.execute(text(f"alter table samples detach partition {name}"))
            session.execute(text(f"drop table {name}"))
            session.commit()
            out.partitions.append(name)
        except OperationalError as exc:  # the lock not had in time: the next beat again
            session.rollback()
            log.warning("retention: partition %s not dropped now: %s", name, exc.orig)
    # the default partition is empty but when beat fell months behind: then no look at the runs at all
    empty = not session.scalar(text(f"select exists (select 1 from {partitions.DEFAULT})"))  # noqa: S608
    for _ in range(0 if empty else MAX_BATCHES_PER_CALL):
        params = {"terminal": [t.value for t in TERMINAL], "cutoff": cutoff, "batch": s.sample_retention_batch}
        result = cast(CursorResult[Any], session.execute(text(_DEFAULT_BATCH), params))
        gone = result.rowcount or 0
        session.commit()
        out.rows += gone
        if gone < s.sample_retention_batch:
            break
    if out.partitions or out.rows:
        log.info("retention: dropped %s, deleted %d rows of %s", out.partitions or "no partition", out.rows,
                 partitions.DEFAULT)
    return out
