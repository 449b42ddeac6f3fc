"""GET /api/health: what is working now, and what is not happening. Public (no sign-in), cheap, and never slow:
every part is asked with a short timeout, so a hung part shows as such instead of hanging the answer.

- database: app.core.dbwatch's verdict ("not answering for 7 s" while PostgreSQL hangs) or the error;
- broker: a Redis PING within BROKER_TIMEOUT_S;
- reconciler: when a reconciler pass (leases expired, lost doorbells re-rung) last ran to the end, from any API
  process or from beat's task; "late" past LATE_PERIODS periods (docs/reliability.md, rule 1);
- scheduler: when Celery beat's reconcile task last ran (beat and a worker both alive); beat also runs sample
  retention, so its absence is reported even while the API's own reconciler covers the leases.
Any of them not ok makes `status` "degraded".

An orchestrator's liveness probe must get 200 within 2 s while the server is alive, busy or not (a refusal or a
silence makes Kubernetes restart a healthy server; issue 31): so health takes no admission slot and is never
refused (app.core.admission lets it through), and it is cheap however many probes come. The database's facts and
the broker's PING are each asked once for every probe that arrives while they are being asked (a burst of probes
costs one query and one PING, one worker thread each), both at once, and each probe waits at most ANSWER_WITHIN_S
for them: what has not answered by then is reported as not answering, in a 200 that says "degraded"."""
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

BROKER_TIMEOUT_S = 1.0  # the Redis client's own connect and read timeouts
# A probe waits this long at most for the database's facts and the PING (asked at once). Its 2 s must also pay for
# the time before the application sees it and for the event loop's lateness: in a process short of CPU, up to 2.6 s
# and 1.5 s measured for the probes over 2 s (./hostbench load, docs/scaling.md). So the wait is short.
ANSWER_WITHIN_S = 0.5
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


_in_flight: "dict[str, asyncio.Future]" = {}


async def _shared(name: str, fn):  # type: ignore[no-untyped-def]
    """fn() in a worker thread, asked once for every probe that arrives while it is being asked; each probe waits
    at most ANSWER_WITHIN_S (the thread may outlive the wait: the next probes share it until it ends)."""
    loop = asyncio.get_running_loop()
    fut = _in_flight.get(name)
    if fut is None or fut.done() or fut.get_loop() is not loop:
        fut = _in_flight[name] = asyncio.ensure_future(loop.run_in_executor(None, fn))
        fut.add_done_callback(lambda f: f.cancelled() or f.exception())  # retrieved, though every waiter left
    async with asyncio.timeout(ANSWER_WITHIN_S):
        return await asyncio.shield(fut)


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


def _age(marks: dict[str, datetime], name: str, what: str) -> str:
    period = get_settings().reconcile_s
    at = marks.get(name)
    if at is None:
        if time.monotonic() - STARTED < LATE_PERIODS * period:
            return "ok"  # just started: the first pass is due within a period
        return f"late: {what} has not run since this API process started"
    age = (utcnow() - at).total_seconds()
    return "ok" if age <= LATE_PERIODS * period else f"late: {what} last ran {age:.0f} s ago"


async def _database() -> tuple[str, int, dict[str, datetime]]:
    state = DB_WATCH.state() if DB_WATCH.running else None
    if state is not None and state.hung:
        return state.detail, 0, {}
    try:
        online, marks = await _shared("database", _db_facts)
        return "ok", online, marks
    except TimeoutError:
        return f"not answering within {ANSWER_WITHIN_S:g} s", 0, {}
    except Exception as exc:  # noqa: BLE001 - health reports, never raises
        return f"error: {type(exc).__name__}", 0, {}


async def _broker() -> str:
    try:
        await _shared("broker", _ping)
        return "ok"
    except TimeoutError:
        return f"not answering within {ANSWER_WITHIN_S:g} s"
    except Exception as exc:  # noqa: BLE001
        return f"error: {type(exc).__name__}"


async def health() -> Health:
    (db, online, marks), br = await asyncio.gather(_database(), _broker())
    if db == "ok":
        reconciler = _age(marks, "reconciled", "the reconciler")
        scheduler = _age(marks, "beat", "Celery beat's reconcile task")
    else:
        reconciler = scheduler = "unknown: the database is not answering"
    ok = db == br == reconciler == scheduler == "ok"
    return Health(status="ok" if ok else "degraded", database=db, broker=br, reconciler=reconciler,
                  scheduler=scheduler, runners_online=online, version=get_settings().hostbench_version)
