"""Server-Sent Events: the backlog from PostgreSQL, then live samples from Redis pub/sub.

Resume is by sequence number (`Last-Event-ID` or `?after_seq=`), so a reconnect leaves no gap and no
duplicate. Redis is only the fast path (one subscription per process, app.live.hub): whenever a gap in seq
shows, when the hub lost messages, and every RESYNC_LIVE_S regardless, the stream re-reads PostgreSQL, so a
lost publish delays a point by at most that long; without Redis it re-reads every RESYNC_S.

`end` comes once the run has ended *and* its attempt has delivered every sample it will send (the run's
`samples_closed`): a run the server ended may still get the samples its runner spooled meanwhile, and a stream
that ended at once lost them (chaos `api-kill` in CI: 3 samples stored after the stream's end). CLOSE_WAIT_S after
the end the stream ends anyway, saying `samples_complete: false` (docs/reliability.md, rule 9)."""
import asyncio
import json
import re
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from typing import Annotated

import anyio
import redis
from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from app.core import broker
from app.core.admission import slot
from app.core.bounds import SAMPLES_PAGE_MAX, Id
from app.core.config import get_settings
from app.core.db import busy_as_503, get_sessionmaker, utcnow
from app.core.errors import Forbidden, TooMany, Unauthorized
from app.jobs import service
from app.jobs.models import TERMINAL, Run
from app.live.hub import hub
from app.users.auth import ViewerDep, authenticate
from app.users.service import CREDENTIALS_EPOCH

router = APIRouter(prefix="/api", tags=["live"])
RESYNC_S = 3.0  # without Redis: how often a stream re-reads PostgreSQL
RESYNC_LIVE_S = 15.0  # with Redis: the safety re-read (and the page's progress update)
PING_S = 15.0
CREDENTIAL_POLL_S = 1.0  # how often a stream looks whether a credential was revoked (one Redis GET)
CREDENTIAL_FALLBACK_S = 15.0  # without Redis: how often it re-checks its credential in PostgreSQL
MAX_SEQ = 10**12  # the largest seq a client may resume from (as after_seq)
SLOT_TTL_S = 45.0  # a slot not refreshed for this long (a process that died) is free again
PER_USER = get_settings().hostbench_sse_per_user
RETRY_AFTER_S = 5
# After a run's end, how long a stream waits for the rest of its attempt's samples: a runner that could not reach the
# server retries its uploads at most every 10 s (its backoff cap), so a live host's backlog is in well before this.
CLOSE_WAIT_S = 30.0
CLOSE_POLL_S = 1.0  # while it waits: how often it re-reads PostgreSQL (the runner's `closed` also wakes it)

# Live-stream slots, counted across every API process in Redis (sorted sets scored by expiry), per person and
# in total; refreshed at every ping and removed when the stream ends, so a slot is always given back.
_TAKE = """
local now, exp = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 1 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return 2 end
redis.call('ZADD', KEYS[1], exp, ARGV[3])
redis.call('ZADD', KEYS[2], exp, ARGV[3])
redis.call('EXPIRE', KEYS[1], 3600)
redis.call('EXPIRE', KEYS[2], 3600)
return 0
"""
ALL_KEY = "hb:sse:all"
_local: Counter = Counter()  # without Redis: this process's own count (per user and "")


def _user_key(user: str) -> str:
    return f"hb:sse:user:{user}"


def take_slot(user: str, slot_id: str) -> None:
    """Raise 429 (Retry-After) when the person, or the server, has no live-stream slot left."""
    total = get_settings().max_sse_connections
    try:
        why = broker.get_redis().eval(_TAKE, 2, ALL_KEY, _user_key(user), time.time(), time.time() + SLOT_TTL_S,
                                      slot_id, total, PER_USER)
    except redis.RedisError:
        why = 1 if _local[""] >= total else 2 if _local[user] >= PER_USER else 0
        if why == 0:
            _local[""] += 1
            _local[user] += 1
            slot_id = f"local:{slot_id}"
    if why == 1:
        raise TooMany(f"{total} live streams are open on this server (the limit); retry later", RETRY_AFTER_S)
    if why == 2:
        raise TooMany(f"you have {PER_USER} live streams open (the limit per person); close some tabs", RETRY_AFTER_S)


def refresh_slot(user: str, slot_id: str) -> None:
    try:
        pipe = broker.get_redis().pipeline(transaction=False)
        for key in (ALL_KEY, _user_key(user)):
            pipe.zadd(key, {slot_id: time.time() + SLOT_TTL_S}, xx=True)
        pipe.execute()
    except redis.RedisError:
        pass


def give_slot(user: str, slot_id: str) -> None:
    try:
        pipe = broker.get_redis().pipeline(transaction=False)
        pipe.zrem(ALL_KEY, slot_id)
        pipe.zrem(_user_key(user), slot_id)
        pipe.execute()
    except redis.RedisError:
        pass
    if _local[user] > 0:  # a slot taken while Redis was down
        _local[user] -= 1
        _local[""] -= 1


def _ending(run: Run) -> bool | None:
    """Whether a stream ends now: None while the run is on, or has ended but its attempt may still send samples (for
    CLOSE_WAIT_S after the end); True when every sample of the attempt is in (its runner said so, or it was never
    handed out); False when the wait has passed without that (the host may send them later: a reload shows them)."""
    if run.status not in TERMINAL:
        return None
    if run.samples_closed or run.attempt == 0:
        return True
    if run.finished_at is None or (utcnow() - run.finished_at).total_seconds() >= CLOSE_WAIT_S:
        return False
    return None


Snapshot = tuple[dict, list[dict], bool | None]


def _snapshot(run_id: int, after_seq: int) -> Snapshot:
    """The run, its samples after after_seq, and whether the stream ends (_ending). The run is read first: a runner
    says `closed` only after its samples were stored, so a run read as closed has them all in the read after it."""
    with busy_as_503("dashboard"), get_sessionmaker()() as session:
        run = service.get_run(session, run_id)
        samples = service.samples_after(session, run, after_seq, SAMPLES_PAGE_MAX)
        ending = _ending(run) if len(samples) < SAMPLES_PAGE_MAX else None  # a full page: more to send first
        return (service.run_public(session, run).model_dump(mode="json"), [s.model_dump() for s in samples],
                ending)


def _end(run: dict, complete: bool) -> str:
    return _event("end", {**run, "samples_complete": complete})


async def _resnapshot(run_id: int, after_seq: int) -> Snapshot | None:
    """A re-read while streaming: in a dashboard slot; None when the server is too busy now (next time then)."""
    try:
        async with slot("dashboard"):
            return await run_in_threadpool(_snapshot, run_id, after_seq)
    except TooMany:
        return None


def _last_event_id(value: str | None) -> int | None:
    """The seq a reconnecting EventSource sends back; anything else (not ASCII digits, past the largest seq) is
    ignored and the stream starts from after_seq (it was a 500: a text int() refused, or a number past bigint)."""
    if value is None or not re.fullmatch(r"-?[0-9]{1,13}", value.strip()):
        return None
    seq = int(value)
    return seq if -1 <= seq <= MAX_SEQ else None


def _still_allowed(request: Request) -> bool:
    """Whether the stream's credential (token or session cookie) and its person are still valid now."""
    try:
        with get_sessionmaker()() as session:
            authenticate(request, session)
            session.commit()
        return True
    except (Unauthorized, Forbidden):
        return False
    except Exception:  # the database is down or busy: not a revocation; the stream goes on and asks again later
        return True


class _Credential:
    """When to re-check: whenever the credentials epoch (app.users.service.credentials_changed) moves, looked at
    every CREDENTIAL_POLL_S; without Redis, every CREDENTIAL_FALLBACK_S."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self.epoch = self._epoch()
        self.next_poll = time.monotonic() + CREDENTIAL_POLL_S
        self.next_fallback = time.monotonic() + CREDENTIAL_FALLBACK_S

    @staticmethod
    def _epoch() -> str | None:
        try:
            return str(broker.get_redis().get(CREDENTIALS_EPOCH) or 0)
        except redis.RedisError:
            return None

    async def revoked(self) -> bool:
        now = time.monotonic()
        if now < self.next_poll:
            return False
        self.next_poll = now + CREDENTIAL_POLL_S
        epoch = await run_in_threadpool(self._epoch)
        due = (epoch is not None and epoch != self.epoch) or (epoch is None and now >= self.next_fallback)
        if not due:
            return False
        self.epoch = epoch
        self.next_fallback = now + CREDENTIAL_FALLBACK_S
        return not await run_in_threadpool(_still_allowed, self.request)


def _event(kind: str, data: dict, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


@router.get("/runs/{run_id}/events", response_class=StreamingResponse,
            responses={200: {"content": {"text/event-stream": {}}, "description": "SSE stream"},
                       429: {"description": "no live-stream slot left (per person or in total); Retry-After"}})
async def run_events(
    run_id: Id,
    request: Request,
    p: ViewerDep,  # the session cookie (EventSource sends it) and the origin check (app.users.auth)
    after_seq: Annotated[int, Query(ge=-1, le=MAX_SEQ)] = -1,
    last_event_id: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    resume = _last_event_id(last_event_id)
    if resume is not None:
        after_seq = max(after_seq, resume)
    first = await run_in_threadpool(_snapshot, run_id, after_seq)  # 404 before the stream opens
    slot_id = uuid.uuid4().hex
    await run_in_threadpool(take_slot, p.name, slot_id)
    h = hub()
    sub = h.subscribe(broker.run_channel(run_id))

    credential = _Credential(request)

    async def stream() -> AsyncIterator[str]:
        last = after_seq
        try:
            live = await h.ready(2.0)
            yield "retry: 1000\n\n"
            yield _event("run", first[0])
            current, fresh, ending = first
            if live:  # subscribed first, then re-read, so nothing falls between backlog and live
                again = await _resnapshot(run_id, last)
                if again is not None:
                    current, fresh, ending = again
            for s in fresh:
                if s["seq"] > last:
                    yield _event("sample", s, s["seq"])
                    last = s["seq"]
            if ending is not None:
                yield _end(current, ending)
                return

            def next_sync_at() -> float:  # ended, waiting for the last samples: often; else the safety re-read
                wait = CLOSE_POLL_S if current["status"] in TERMINAL else RESYNC_LIVE_S if h.up.is_set() else RESYNC_S
                return time.monotonic() + wait

            next_sync = next_sync_at()
            next_ping = time.monotonic() + PING_S
            while not await request.is_disconnected():
                if await credential.revoked():  # token revoked, session ended, person disabled or deleted
                    yield _event("revoked", {"detail": "your credential was revoked or your account disabled"})
                    return
                data = await sub.get(1.0) if h.up.is_set() else None
                if data is None and not h.up.is_set():
                    await asyncio.sleep(1.0)
                resync = time.monotonic() >= next_sync or sub.lost
                if data:
                    body = json.loads(data)
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
                if resync:  # also a progress update for the page
                    sub.lost = False
                    again = await _resnapshot(run_id, last)
                    if again is not None:
                        current, fresh, ending = again
                        for s in fresh:
                            yield _event("sample", s, s["seq"])
                            last = s["seq"]
                        yield _event("run", current)
                        if ending is not None:
                            yield _end(current, ending)
                            return
                    next_sync = next_sync_at()
                if time.monotonic() >= next_ping:
                    yield ": ping\n\n"
                    await run_in_threadpool(refresh_slot, p.name, slot_id)
                    next_ping = time.monotonic() + PING_S
        finally:
            h.unsubscribe(sub)
            # Starlette cancels this generator when the client goes away; unshielded, the await below was
            # cancelled too and the slot stayed taken until its TTL (a flaky slot test caught it).
            with anyio.CancelScope(shield=True):
                await run_in_threadpool(give_slot, p.name, slot_id)

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
