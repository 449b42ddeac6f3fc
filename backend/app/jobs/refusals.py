"""The runners' calls the server itself could not take: a lease never runs out for them (issue 27, item 5).

A runner's call about a run (its lease renewal, its samples, start, finish) answered with a 5xx or a 429 by the
server (PostgreSQL stopped or hung, the runners' connections all in use, no admission slot) was sent: the runner
was there, the server was not. Before, such renewals were refused with 503 through a PostgreSQL outage, and when
it came back the reconciler failed the run for silence ("no lease renewal for 4 s", chaos postgres-stop, 2 of 3
runs). Now the moment of every such refusal is noted (`note`): at once in Redis (the reconciler of any process
reads it there), and in `server_marks` ("refused") at the API's next mark (kept when Redis is away). The
reconciler's every pass first extends each running lease to at least the last refusal plus a lease's length
(`extend`): a runner is judged only on the renewals it failed to send. A runner that is really gone is failed a
lease after the server took calls again.

The note is per server, not per run: while the server refuses runners' calls, no run is failed for silence."""
import logging
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.core import broker
from app.core.config import get_settings
from app.jobs.models import ON_HOST, Run, ServerMark

log = logging.getLogger("hostbench.refusals")
MARK = "refused"  # server_marks' name for the last refusal
KEY = "hostbench:runner-refused-at"  # Redis: the last refusal, Unix time
NOTE_EVERY_S = 0.5  # a process writes Redis at most this often (an outage refuses hundreds of calls)
_pending: float | None = None  # the last refusal not yet written to server_marks (Unix time)
_sent_at = 0.0


def counts(path: str, status: int) -> bool:
    """Whether this answer is the server's own failure to take a runner's call about a run."""
    return path.startswith("/api/runner/runs/") and (status >= 500 or status == 429)


def note(at: float | None = None) -> None:
    """A runner's call was refused by the server's own failure now (or at `at`, Unix time)."""
    global _pending, _sent_at
    at = time.time() if at is None else at
    _pending = at if _pending is None else max(_pending, at)
    if at - _sent_at >= NOTE_EVERY_S:
        _sent_at = at
        broker.later(lambda: broker.get_redis().set(KEY, repr(at), ex=3600))


def flush(session: Session) -> None:
    """Write this process's last refusal to server_marks (the API's mark loop, every reconcile period)."""
    global _pending
    at = _pending
    if at is None:
        return
    when = datetime.fromtimestamp(at, UTC)
    from sqlalchemy.dialects.postgresql import insert

    session.execute(insert(ServerMark).values(name=MARK, at=when).on_conflict_do_update(
        index_elements=["name"], set_={"at": func.greatest(ServerMark.at, when)}))
    session.commit()
    if _pending == at:
        _pending = None


def last(session: Session) -> datetime | None:
    """The last refusal any process noted: the later of Redis's and server_marks'."""
    marked = session.scalar(select(ServerMark.at).where(ServerMark.name == MARK))
    try:
        raw = broker.get_redis().get(KEY)
    except Exception as exc:  # noqa: BLE001 - Redis away: server_marks alone
        log.debug("refusals: Redis not read: %s", exc)
        raw = None
    noted = datetime.fromtimestamp(float(raw), UTC) if raw else None
    found = [t for t in (marked, noted) if t is not None]
    return max(found) if found else None


def extend(session: Session) -> int:
    """Every running lease extended to at least the last refusal plus a lease (and committed); how many were."""
    refused = last(session)
    if refused is None:
        return 0
    until = refused + timedelta(seconds=get_settings().lease_s)
    ids = session.scalars(
        update(Run).where(Run.status.in_(ON_HOST), Run.claimed_at.is_not(None),
                          Run.lease_expires_at < until)
        .values(lease_expires_at=until).returning(Run.id)).all()
    session.commit()
    if ids:
        log.warning("%d running lease(s) extended to %s: the server refused runners' calls until %s",
                    len(ids), until.isoformat(timespec="seconds"), refused.isoformat(timespec="seconds"))
    return len(ids)
