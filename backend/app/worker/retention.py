"""Sample retention (docs/reliability.md, rule 8): the per-second samples of runs that finished more than
Settings.sample_retention_days ago are deleted, in batches of Settings.sample_retention_batch rows, each batch its
own short transaction, so that the task never holds locks for long and a large backlog is worked off over
several beats. The run row, its computed result (statistics, peaks, validity) and its audit trail stay; only a
finished run's samples ever go, never those of a run still queued, dispatched or running."""
from datetime import timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, delete, select
from sqlalchemy.orm import Session

from app.core.config import get_settings
from app.core.db import utcnow
from app.jobs.models import TERMINAL, Run, Sample

# One call deletes at most this many batches; the next beat goes on where it stopped.
MAX_BATCHES_PER_CALL = 20


def prune_samples(session: Session) -> int:
    """Delete expired samples; returns how many rows went."""
    s = get_settings()
    if s.sample_retention_days <= 0:
        return 0
    cutoff = utcnow() - timedelta(days=s.sample_retention_days)
    expired_runs = select(Run.id).where(Run.status.in_(TERMINAL), Run.finished_at < cutoff)
    total = 0
    for _ in range(MAX_BATCHES_PER_CALL):
        batch = select(Sample.id).where(Sample.run_id.in_(expired_runs)).limit(s.sample_retention_batch)
        # a DELETE's result is a CursorResult at run time; Session.execute is typed as returning the base Result
        result = cast(CursorResult[Any], session.execute(delete(Sample).where(Sample.id.in_(batch.scalar_subquery()))))
        gone = result.rowcount or 0
        session.commit()
        total += gone
        if gone < s.sample_retention_batch:
            break
    return total
