"""GET /api/health: what is working now, and what is not happening. Public (no sign-in), cheap, and never slow:
every part is asked with a short timeout, so a hung part shows as such instead of hanging the answer.

- database: app.core.dbwatch's verdict ("not answering for 7 s" while PostgreSQL hangs) or the error;
- broker: a Redis PING within BROKER_TIMEOUT_S;
- reconciler: when a reconciler pass (leases expired, lost doorbells re-rung) last ran to the end, from any API
  process or from beat's task; "late" past LATE_PERIODS periods (docs/reliability.md, rule 1);
- scheduler: when Celery beat's reconcile task last ran (beat and a worker both alive); beat also runs sample
  retention, so its absence is reported even while the API's own reconciler covers the leases.
Any of them not ok makes `status` "degraded".

It has its own admission slots (app.core.admission, "health"), never the dashboard's; the database's facts are
asked once for all the probes that arrive while they are being asked, so a burst of probes costs one query."""
import asyncio
import time
from datetime import datetime

import redis
from pydantic import BaseModel
from sqlalchemy import select, text

from app.core.config import get_settings
from app.core.db import get_sessionmaker, utcnow
from app.core.dbwatch import DB_WATCH
from app.hosts.service import runners_online
from app.jobs.models import ServerMark

BROKER_TIMEOUT_S = 1.0
DB_TIMEOUT_S = 2.0
LATE_PERIODS = 3  # a reconciler or beat pass older than this many reconcile periods is late
STARTED = time.monotonic()


class Health(BaseModel):
    status: str
    database: str
    broker: str
    reconciler: str
    scheduler: str
    runners_online: int
    version: str


_facts_in_flight: "asyncio.Future[tuple[int, dict[str, datetime]]] | None" = None


async def _shared_db_facts() -> tuple[int, dict[str, datetime]]:
    """_db_facts, asked once for every probe that arrives while it is being asked (a burst of probes costs one
    query); each probe waits at most DB_TIMEOUT_S."""
    global _facts_in_flight
    if _facts_in_flight is None or _facts_in_flight.done():
        _facts_in_flight = asyncio.ensure_future(asyncio.get_running_loop().run_in_executor(None, _db_facts))
    return await asyncio.wait_for(asyncio.shield(_facts_in_flight), DB_TIMEOUT_S)


def _db_facts() -> tuple[int, dict[str, datetime]]:
    with get_sessionmaker()() as session:
        session.execute(text("select 1"))
        online = runners_online(session)
        marks = {m.name: m.at for m in session.scalars(select(ServerMark))}
        session.rollback()
        return online, marks


def _ping() -> None:
    client = redis.Redis.from_url(get_settings().redis_url, socket_timeout=BROKER_TIMEOUT_S,
                                  socket_connect_timeout=BROKER_TIMEOUT_S)
    try:
        client.ping()
    finally:
        client.close()


async def _in_thread(fn, timeout: float):  # type: ignore[no-untyped-def]
    """fn() in the default executor, waited for at most `timeout` s (the thread may outlive the wait)."""
    return await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(None, fn), timeout)


def _age(marks: dict[str, datetime], name: str, what: str) -> str:
    period = get_settings().reconcile_s
    at = marks.get(name)
    if at is None:
        if time.monotonic() - STARTED < LATE_PERIODS * period:
            return "ok"  # just started: the first pass is due within a period
        return f"late: {what} has not run since this API process started"
    age = (utcnow() - at).total_seconds()
    return "ok" if age <= LATE_PERIODS * period else f"late: {what} last ran {age:.0f} s ago"


async def health() -> Health:
    online, db = 0, "ok"
    marks: dict[str, datetime] = {}
    state = DB_WATCH.state() if DB_WATCH.running else None
    if state is not None and state.hung:
        db = state.detail
    else:
        try:
            online, marks = await _shared_db_facts()
        except TimeoutError:
            db = f"not answering within {DB_TIMEOUT_S:.0f} s"
        except Exception as exc:  # noqa: BLE001 - health reports, never raises
            db = f"error: {type(exc).__name__}"
    try:
        await _in_thread(_ping, BROKER_TIMEOUT_S + 0.5)
        br = "ok"
    except TimeoutError:
        br = f"not answering within {BROKER_TIMEOUT_S:.0f} s"
    except Exception as exc:  # noqa: BLE001
        br = f"error: {type(exc).__name__}"
    if db == "ok":
        reconciler = _age(marks, "reconciled", "the reconciler")
        scheduler = _age(marks, "beat", "Celery beat's reconcile task")
    else:
        reconciler = scheduler = "unknown: the database is not answering"
    ok = db == br == reconciler == scheduler == "ok"
    return Health(status="ok" if ok else "degraded", database=db, broker=br, reconciler=reconciler,
                  scheduler=scheduler, runners_online=online, version=get_settings().hostbench_version)
