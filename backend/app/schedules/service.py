"""Schedules: create and change them, work out when they fire, and fire them.

Firing (Celery beat, app.worker.tasks.fire_schedules, every Settings.schedules_fire_s): each due schedule is taken
with `SELECT … FOR UPDATE SKIP LOCKED`, one at a time, and fired in the same transaction that moves its next_fire_at
past now; the suite run's jobs commit with that move (app.suites.service.start commits them all). A second beat or
worker skips a row the first holds and, once it is committed, no longer finds it due: a schedule never fires twice
for one due time. The rule after downtime: a schedule that missed several periods (server, beat or database down)
fires ONCE, at the first pass after it is back, and its next time is the first of its times after now (an interval
keeps its phase: due + k·interval); the missed periods are not made up, because N suite runs queued at once on the
same hosts would only wait for each other.

What a firing does with its hosts: each is checked when it fires; one that is busy (a run queued, dispatched or
running), offline (its runner not heard from for runner_online_s), revoked or removed is left out with the reason;
the suite starts on the rest as one suite run. None left: the firing is `skipped`. The suite run refused (the
admission caps' 429, a saved suite deleted, nothing of the suite runs on these hosts): `failed`, with the reason."""
import logging
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import func, select
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.orm import Session

from app.core.db import utcnow
from app.core.errors import Conflict, FieldInvalid, Forbidden, HostbenchError, NotFound
from app.hosts.models import Host
from app.hosts.service import is_online
from app.jobs.doorbell import ring
from app.jobs.models import ACTIVE, Run
from app.schedules import cron as crontab
from app.schedules.models import Schedule, ScheduleFiring
from app.schedules.schemas import (
    MAX_HOSTS,
    FiringPublic,
    Outcome,
    ScheduleIn,
    SchedulePublic,
    SkippedHost,
    Trigger,
)
from app.suites import service as suites

log = logging.getLogger("hostbench.schedules")

MAX_SCHEDULES = 500
PER_PASS = 50  # schedules fired by one beat pass at most; the next pass goes on
PREVIEW = 3  # fire times shown ahead


# -- when ----------------------------------------------------------------------------------------------------------

def upcoming(interval_s: int | None, cron: str | None, after: datetime, n: int = PREVIEW,
             first: datetime | None = None) -> list[datetime]:
    """The next n fire times after `after` (or from `first`, when the first is known)."""
    out: list[datetime] = []
    if interval_s is not None:
        t = first or after + timedelta(seconds=interval_s)
        return [t + timedelta(seconds=interval_s * i) for i in range(n)]
    c = crontab.parse(cast(str, cron))
    t2: datetime | None = first or c.next_after(after)
    while t2 is not None and len(out) < n:
        out.append(t2)
        t2 = c.next_after(t2)
    return out


def advance(s: Schedule, due: datetime, now: datetime) -> datetime | None:
    """The first fire time after now, for a schedule that was due at `due` (see the module's rule after downtime)."""
    if s.interval_s is not None:
        k = int((now - due).total_seconds() // s.interval_s) + 1
        return due + timedelta(seconds=s.interval_s * max(k, 1))
    return crontab.parse(cast(str, s.cron)).next_after(now)


# -- create, change, read ----------------------------------------------------------------------------------------------

def _check(session: Session, body: ScheduleIn) -> None:
    try:
        suites.get_suite(body.suite, session)
    except NotFound as exc:
        raise FieldInvalid(("body", "suite"), exc.detail, "not_found") from None
    for i, host_id in enumerate(body.host_ids or []):
        h = session.get(Host, host_id)
        if h is None or h.deleted_at is not None or h.revoked_at is not None:
            raise FieldInvalid(("body", "host_ids", i), f"host {host_id} is not a registered host", "not_found")


def _set(s: Schedule, body: ScheduleIn) -> None:
    s.title, s.suite, s.enabled = body.title, body.suite, body.enabled
    s.host_ids = list(body.host_ids) if body.host_ids is not None else None
    s.label_key, s.label_value = body.label.split("=", 1) if body.label else (None, None)
    s.interval_s, s.cron = body.interval_s, body.cron


def create(session: Session, body: ScheduleIn, owner: str) -> Schedule:
    _check(session, body)
    if (session.scalar(select(func.count()).select_from(Schedule)) or 0) >= MAX_SCHEDULES:
        raise Conflict(f"there are {MAX_SCHEDULES} schedules already; delete some first")
    now = utcnow()
    s = Schedule(created_by=owner, created_at=now, updated_at=now)
    _set(s, body)
    s.next_fire_at = upcoming(s.interval_s, s.cron, now, 1)[0]
    session.add(s)
    session.flush()
    return s


def get(session: Session, schedule_id: int, *, lock: bool = False) -> Schedule:
    q = select(Schedule).where(Schedule.id == schedule_id)
    s = session.scalar(q.with_for_update() if lock else q)
    if s is None:
        raise NotFound(f"schedule {schedule_id} not found")
    return s


def editable(session: Session, schedule_id: int, name: str, is_admin: bool) -> Schedule:
    s = get(session, schedule_id, lock=True)
    if s.created_by != name and not is_admin:
        raise Forbidden(f"schedule {schedule_id} is {s.created_by}'s: only its owner or an admin may change it")
    return s


def update(session: Session, s: Schedule, body: ScheduleIn) -> Schedule:
    """Change it; a new recurrence, or being enabled again, counts its next time from now (no catching up)."""
    _check(session, body)
    again = (body.interval_s, body.cron) != (s.interval_s, s.cron) or (body.enabled and not s.enabled)
    _set(s, body)
    s.updated_at = utcnow()
    if again:
        s.next_fire_at = upcoming(s.interval_s, s.cron, s.updated_at, 1)[0]
    session.flush()
    return s


def firing_public(f: ScheduleFiring) -> FiringPublic:
    return FiringPublic(id=f.id, schedule_id=f.schedule_id, fired_at=f.fired_at, due_at=f.due_at,
                        trigger=cast(Trigger, f.trigger), outcome=cast(Outcome, f.outcome), reason=f.reason,
                        suite_run_id=f.suite_run_id, host_ids=list(f.host_ids or []),
                        skipped=[SkippedHost(**x) for x in f.skipped or []])


def _titles(session: Session) -> dict[str, str]:
    return {x.id: x.title for x in suites.all_suites(session)}


def public(session: Session, s: Schedule, titles: dict[str, str] | None = None,
           last: ScheduleFiring | None = None, *, with_last: bool = True) -> SchedulePublic:
    titles = titles if titles is not None else _titles(session)
    if with_last and last is None:
        last = session.scalar(select(ScheduleFiring).where(ScheduleFiring.schedule_id == s.id)
                              .order_by(ScheduleFiring.id.desc()).limit(1))
    nxt = upcoming(s.interval_s, s.cron, utcnow(), first=s.next_fire_at) if s.enabled else []
    return SchedulePublic(
        id=s.id, title=s.title, suite=s.suite, suite_title=titles.get(s.suite), host_ids=s.host_ids,
        label=f"{s.label_key}={s.label_value}" if s.label_key else None, interval_s=s.interval_s, cron=s.cron,
        enabled=s.enabled, created_by=s.created_by, created_at=s.created_at, updated_at=s.updated_at,
        next_fire_at=s.next_fire_at if s.enabled else None, next=nxt,
        last_firing=firing_public(last) if last is not None else None)


def listing(session: Session) -> list[SchedulePublic]:
    rows = list(session.scalars(select(Schedule).order_by(Schedule.id).limit(MAX_SCHEDULES)))
    latest = select(func.max(ScheduleFiring.id)).group_by(ScheduleFiring.schedule_id)
    last = {f.schedule_id: f for f in session.scalars(select(ScheduleFiring).where(ScheduleFiring.id.in_(latest)))}
    titles = _titles(session)
    return [public(session, s, titles, last.get(s.id), with_last=False) for s in rows]


def history(session: Session, schedule_id: int, limit: int, offset: int) -> tuple[list[FiringPublic], int]:
    get(session, schedule_id)
    where = ScheduleFiring.schedule_id == schedule_id
    count = session.scalar(select(func.count()).select_from(ScheduleFiring).where(where)) or 0
    rows = session.scalars(select(ScheduleFiring).where(where).order_by(ScheduleFiring.id.desc())
                           .limit(limit).offset(offset))
    return [firing_public(f) for f in rows], count


# -- firing --------------------------------------------------------------------------------------------------------

def _targets(session: Session, s: Schedule) -> tuple[list[int], list[dict[str, Any]], str | None]:
    """(hosts to start on, hosts left out with why, why none at all when the label matched no host)."""
    if s.label_key is not None:
        q = (select(Host).where(Host.labels[s.label_key].as_string() == s.label_value, Host.deleted_at.is_(None),
                                Host.revoked_at.is_(None)).order_by(Host.id))
        hosts: list[tuple[int, Host | None]] = [(h.id, h) for h in session.scalars(q)]
        if not hosts:
            return [], [], f"no host carries the label {s.label_key}={s.label_value}"
    else:
        found = {h.id: h for h in session.scalars(select(Host).where(Host.id.in_(s.host_ids or [])))}
        hosts = [(i, found.get(i)) for i in s.host_ids or []]
    busy = set(session.scalars(select(Run.host_id).where(Run.host_id.in_([i for i, _ in hosts]),
                                                         Run.status.in_(ACTIVE)).distinct()))
    ready: list[int] = []
    left: list[dict[str, Any]] = []
    for host_id, h in hosts:
        why = None
        if h is None or h.deleted_at is not None:
            why = "removed from the fleet"
        elif h.revoked_at is not None:
            why = "its runner's credential was revoked"
        elif not is_online(h):
            seen = h.last_seen_at.strftime("%Y-%m-%d %H:%M:%S UTC") if h.last_seen_at else "never"
            why = f"offline (last heard from: {seen})"
        elif host_id in busy:
            why = "busy (a run queued or running)"
        elif len(ready) >= MAX_HOSTS:
            why = f"over the {MAX_HOSTS} hosts one suite run takes"
        if why:
            left.append({"host_id": host_id, "name": h.name if h is not None else None, "reason": why})
        else:
            ready.append(host_id)
    return ready, left, None


def _fail(session: Session, schedule_id: int, trigger: str, due: datetime | None, reason: str,
          left: list[dict[str, Any]]) -> ScheduleFiring | None:
    """After a refused suite run (its transaction rolled back): take the row again and record the failure, unless
    another firer recorded this due time meanwhile."""
    s = session.scalar(select(Schedule).where(Schedule.id == schedule_id).with_for_update())
    if s is None or (due is not None and s.next_fire_at != due):
        session.rollback()
        return None
    if due is not None:
        _move(s, due)
    f = ScheduleFiring(schedule_id=schedule_id, due_at=due, trigger=trigger, outcome="failed", reason=reason[:2000],
                       host_ids=[], skipped=left)
    session.add(f)
    session.commit()
    return f


def _move(s: Schedule, due: datetime) -> None:
    nxt = advance(s, due, utcnow())
    if nxt is None:  # a cron expression whose dates ran out (checked when saved: not expected)
        s.enabled = False
    else:
        s.next_fire_at = nxt


def fire(session: Session, s: Schedule, trigger: str, due: datetime | None) -> ScheduleFiring | None:
    """Fire one schedule whose row this transaction holds locked (moving its next time first when beat fires it).
    Commits; None if another firer took this due time."""
    schedule_id = s.id
    if due is not None:
        _move(s, due)
    f = ScheduleFiring(schedule_id=schedule_id, due_at=due, trigger=trigger, host_ids=[], skipped=[])
    try:
        suites.get_suite(s.suite, session)
    except NotFound as exc:
        f.outcome, f.reason = "failed", exc.detail
        session.add(f)
        session.commit()
        return f
    ready, left, none_why = _targets(session, s)
    f.skipped = left
    if not ready:
        f.outcome = "skipped"
        f.reason = none_why or "no host free: " + "; ".join(f"{x['name'] or x['host_id']}: {x['reason']}"
                                                            for x in left)
        session.add(f)
        session.commit()
        return f
    f.outcome, f.host_ids = "started", ready
    session.add(f)
    try:
        sr = suites.start(session, s.suite, ready, s.created_by)  # commits f and the move with the suite's jobs
    except HostbenchError as exc:
        session.rollback()
        why = f"{exc.status_code}: {exc.detail}"
        return _fail(session, schedule_id, trigger, due, f"the suite run was refused ({why})", left)
    except (OperationalError, InterfaceError):
        raise  # the database is away: the task skips its turn (app.worker.tasks), the schedule stays due
    except Exception as exc:  # noqa: BLE001 - one schedule's fault must not stop every later one in each pass
        session.rollback()
        log.exception("schedule %s: starting its suite run failed", schedule_id)
        return _fail(session, schedule_id, trigger, due, f"internal error: {type(exc).__name__}", left)
    f.suite_run_id = sr.id
    session.commit()
    for host_id in ready:
        ring(host_id)
    return f


def fire_due(session: Session, limit: int = PER_PASS) -> int:
    """Beat's pass: fire every schedule due now, each once, each in its own transaction; how many fired."""
    n = 0
    for _ in range(limit):
        s = session.scalar(select(Schedule).where(Schedule.enabled.is_(True), Schedule.next_fire_at <= utcnow())
                           .order_by(Schedule.next_fire_at, Schedule.id).limit(1)
                           .with_for_update(skip_locked=True))
        if s is None:
            session.rollback()
            break
        if fire(session, s, "beat", s.next_fire_at) is not None:
            n += 1
    return n


def run_now(session: Session, schedule_id: int) -> ScheduleFiring:
    """Fire it now, outside its recurrence (its next time stays)."""
    s = get(session, schedule_id, lock=True)
    f = fire(session, s, "run-now", None)
    assert f is not None  # noqa: S101 - only a beat firing (due given) can be taken by another firer
    return f
