"""The API process's own reconciler and its lifespan: what starts with each API process and stops with it (the
event-loop lag probe, the database watcher, the reconcile loop) and what closes at shutdown."""
import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.to_thread
from fastapi import FastAPI

from app.core.admission import LAG
from app.core.config import get_settings
from app.core.db import get_sessionmaker
from app.core.dbwatch import DB_WATCH
from app.jobs import refusals
from app.jobs.dispatch import mark, reconcile_exclusive
from app.runner_api import fast


def _mark_api() -> None:
    with get_sessionmaker()() as session:
        mark(session, "api")
        refusals.flush(session)  # the runners' calls this process could not take (kept when Redis is away)


async def reconcile_loop() -> None:
    """The reconciler from inside the API (dispatch.reconcile_exclusive), every reconcile_s: leases are expired
    and lost doorbells re-rung even while Celery beat is down. Each period also marks "api" (an API process is
    up: while none is, no lease is expired, dispatch.renew_after_gap). A failed pass (the database away) is
    logged once per outage and retried at the next period."""
    log = logging.getLogger("hostbench.reconcile")
    failing = False
    while True:
        try:
            await anyio.to_thread.run_sync(_mark_api)
            await anyio.to_thread.run_sync(reconcile_exclusive)
            if failing:
                log.info("reconciler pass succeeded again")
            failing = False
        except Exception as exc:  # noqa: BLE001 - the loop must outlive any one pass
            if not failing:
                log.warning("reconciler pass failed (retrying every %.0f s): %s: %s", get_settings().reconcile_s,
                            type(exc).__name__, str(exc)[:200])
            failing = True
        await asyncio.sleep(get_settings().reconcile_s)


@asynccontextmanager
async def lifespan(_: FastAPI) -> AsyncIterator[None]:
    tasks = [LAG.start()]  # how late the event loop runs: the dashboard is shed when it is out of CPU
    DB_WATCH.start()  # is PostgreSQL answering (a hung one is refused at once: app.core.admission)
    if get_settings().api_reconcile:
        tasks.append(asyncio.create_task(reconcile_loop()))
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        await fast.close()  # the runners' async connections (app.runner_api.fast)
