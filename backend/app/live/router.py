"""Server-Sent Events: the backlog from PostgreSQL, then live samples from Redis pub/sub.

Resume is by sequence number (`Last-Event-ID` or `?after_seq=`), so a reconnect leaves no gap and no
duplicate. Redis is only the fast path: every few seconds, and whenever a gap in seq shows, the stream
re-reads PostgreSQL, so a lost publish delays a point by at most that long."""
import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from app.core import broker
from app.core.config import get_settings
from app.core.db import get_sessionmaker
from app.core.errors import HostbenchError, TooMany
from app.jobs import service
from app.jobs.models import TERMINAL

router = APIRouter(prefix="/api", tags=["live"])
_open_streams = 0
RESYNC_S = 3.0
PING_S = 15.0


class Forbidden(HostbenchError):
    status_code = 403


def _snapshot(run_id: int, after_seq: int) -> tuple[dict, list[dict]]:
    with get_sessionmaker()() as session:
        run = service.get_run(session, run_id)
        samples = service.samples_after(session, run, after_seq, 20000)
        return service.run_public(session, run).model_dump(mode="json"), [s.model_dump() for s in samples]


def _event(kind: str, data: dict, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def _check_origin(request: Request, origin: str | None) -> None:
    if origin is None:
        return
    host = request.headers.get("host", "")
    allowed = {f"http://{host}", f"https://{host}", *get_settings().allowed_origins}
    if origin not in allowed:
        raise Forbidden(f"origin {origin} may not open this stream")


@router.get("/runs/{run_id}/events", response_class=StreamingResponse,
            responses={200: {"content": {"text/event-stream": {}}, "description": "SSE stream"}})
async def run_events(
    run_id: int,
    request: Request,
    after_seq: Annotated[int, Query(ge=-1, le=10**12)] = -1,
    last_event_id: Annotated[str | None, Header()] = None,
    origin: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    global _open_streams
    _check_origin(request, origin)
    if last_event_id is not None and last_event_id.strip().lstrip("-").isdigit():
        after_seq = max(after_seq, int(last_event_id))
    run, backlog = await run_in_threadpool(_snapshot, run_id, after_seq)  # 404 before the stream opens
    if _open_streams >= get_settings().max_sse_connections:
        raise TooMany("too many live streams open; close some tabs")
    _open_streams += 1

    async def stream() -> AsyncIterator[str]:
        global _open_streams
        last = after_seq
        pubsub = broker.get_async_redis().pubsub()
        try:
            try:
                await pubsub.subscribe(broker.run_channel(run_id))
                live = True
            except Exception:  # noqa: BLE001 - without Redis, fall back to re-reading PostgreSQL
                live = False
            yield "retry: 1000\n\n"
            yield _event("run", run)
            current, fresh = (run, backlog)
            if live:  # subscribed first, then re-read, so nothing falls between backlog and live
                current, fresh = await run_in_threadpool(_snapshot, run_id, last)
            for s in fresh:
                if s["seq"] > last:
                    yield _event("sample", s, s["seq"])
                    last = s["seq"]
            if current["status"] in TERMINAL:
                yield _event("end", current)
                return
            next_sync = time.monotonic() + RESYNC_S
            next_ping = time.monotonic() + PING_S
            while not await request.is_disconnected():
                msg = None
                if live:
                    try:
                        msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                    except Exception:  # noqa: BLE001
                        live = False
                else:
                    await asyncio.sleep(1.0)
                resync = time.monotonic() >= next_sync
                if msg is not None:
                    body = json.loads(msg["data"])
                    if body.get("type") == "samples":
                        for s in body["samples"]:
                            if s["seq"] == last + 1:
                                yield _event("sample", s, s["seq"])
                                last = s["seq"]
                            elif s["seq"] > last + 1:
                                resync = True  # a gap: fill it from PostgreSQL, in order
                                break
                    elif body.get("type") == "run":
                        resync = True
                if resync:  # also a progress update for the page every RESYNC_S
                    current, fresh = await run_in_threadpool(_snapshot, run_id, last)
                    for s in fresh:
                        yield _event("sample", s, s["seq"])
                        last = s["seq"]
                    yield _event("run", current)
                    if current["status"] in TERMINAL:
                        yield _event("end", current)
                        return
                    next_sync = time.monotonic() + RESYNC_S
                if time.monotonic() >= next_ping:
                    yield ": ping\n\n"
                    next_ping = time.monotonic() + PING_S
        finally:
            _open_streams -= 1
            try:
                await pubsub.aclose()
            except Exception:  # noqa: BLE001, S110
                pass

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
