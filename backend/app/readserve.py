"""The read cache's middleware (app.core.readcache keeps the bytes and the generation; this answers from them): a
dashboard read answered again from the bytes of the same read made a moment ago, in the event loop, before admission,
to a caller whose credential this process checked. Part of the composition (it reads the live hub and the users'
credential cache, which core may not import)."""
import asyncio
import time
import weakref

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.admission import LAG, TIMING
from app.core.config import get_settings
from app.core.readcache import CACHE, CACHED, ENTRY_MAX, QUIET_WRITES, READS_CHANNEL, Entry, published_change


async def _listen(sub) -> None:  # noqa: ANN001 - app.live.hub.Subscription
    """Drop what is kept at every message on READS_CHANNEL, and whenever the hub says one may have been missed."""
    while True:
        data = await sub.get(3600.0)
        if data is not None or sub.lost:
            sub.lost = False
            CACHE.changed()


_listeners: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task]" = weakref.WeakKeyDictionary()


def _live() -> bool:
    """Is this event loop's subscription to READS_CHANNEL live? (Started on first use; until Redis confirms it, and
    whenever the hub has lost Redis, no answer is served from the cache.)"""
    from app.live.hub import hub

    h = hub()
    loop = asyncio.get_running_loop()
    task = _listeners.get(loop)
    if task is None or task.done():
        CACHE.changed()
        _listeners[loop] = loop.create_task(_listen(h.subscribe(READS_CHANNEL)))
        return False
    return h.up.is_set()


async def _viewer(scope: Scope) -> bool:
    """Did this process check the caller's credential lately, and may they read (the viewer role at least)?"""
    from app.core.auth import SESSION_COOKIE
    from app.core.security import hash_token
    from app.users import service as users
    from app.users.auth import CREDENTIALS

    headers = dict(scope["headers"])
    auth = headers.get(b"authorization", b"").decode("latin-1")
    key = None
    if auth[:7].lower() == "bearer ":
        token = auth[7:].strip()
        if not token.startswith("hbpat_"):
            return False
        key = hash_token(token)
    else:
        for part in headers.get(b"cookie", b"").decode("latin-1").split(";"):
            name, _, value = part.strip().partition("=")
            if name == SESSION_COOKIE and value:
                key = hash_token(value)
                break
    if key is None:
        return False
    epoch = await CREDENTIALS.epoch_async()
    hit = CREDENTIALS.get(key, epoch)
    return hit is not None and users.role_at_least(hit[0].role, "viewer")


def _timed(scope: Scope, send: Send) -> Send:
    """send, with a Server-Timing header on the answer (HOSTBENCH_SERVER_TIMING): where the request's time went in
    this process, from here (the read cache: its wait for the same read's answer, the credential check) to the
    answer's start. lag: how late the event loop ran as the request arrived (app.core.admission.LAG); cache: until
    admission saw it, or until it was answered without it; gate: admission's wait for a slot; app: the handler's
    time, admitted until its answer started (its worker thread, the interpreter's lock, PostgreSQL); total; t0 and t1,
    the machine's monotonic clock as the request came in here and as its answer started."""
    timing = scope[TIMING] = {"t0": time.monotonic(), "lag": LAG.lag_s}

    async def timed_send(message: Message) -> None:
        if message["type"] == "http.response.start":
            now = time.monotonic()
            t0 = timing["t0"]
            parts = {"lag": timing["lag"], "cache": timing.get("admission", now) - t0}
            if "admission" in timing:
                parts["gate"] = timing.get("admitted", timing.get("refused", now)) - timing["admission"]
            if "admitted" in timing:
                parts["app"] = now - timing["admitted"]
            parts["total"] = now - t0
            value = ", ".join(f"{k};dur={v * 1000:.1f}" for k, v in parts.items())
            # and when, on the machine's monotonic clock (a client on the same machine, ./hostbench load's burst,
            # tells from them how long the request waited before the application saw it, and its answer after)
            value += f', t0;desc="{t0:.6f}", t1;desc="{now:.6f}"'
            message = {**message, "headers": [*message.get("headers", []), (b"server-timing", value.encode())]}
        await send(message)

    return timed_send


class ReadCacheMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if get_settings().hostbench_server_timing:
            send = _timed(scope, send)
        method = scope["method"]
        path: str = scope["path"]
        if method not in ("GET", "HEAD"):
            CACHE.changed()
            if not path.startswith(QUIET_WRITES):
                published_change()
            try:
                return await self.app(scope, receive, send)
            finally:  # and once it is written (a read made meanwhile was made before it)
                CACHE.changed()
        ttl = get_settings().hostbench_read_cache_s
        if method != "GET" or ttl <= 0 or not CACHED.match(path):
            return await self.app(scope, receive, send)
        key = path.encode() + b"?" + scope.get("query_string", b"")
        live = _live()
        if live and await self._kept(scope, send, key, ttl):
            return None
        leader = CACHE.inflight.get(key)
        if leader is not None and (leader.done() or leader.get_loop() is not asyncio.get_running_loop()):
            leader = None  # (another event loop's: a test's client that has gone)
        if live and leader is not None:
            refusal = None
            try:  # the same read is on its way: its answer, once kept, serves this one too
                async with asyncio.timeout(get_settings().hostbench_dashboard_deadline_s):
                    refusal = await asyncio.shield(leader)
            except TimeoutError:
                pass
            if refusal is not None:  # it was refused, the server busy: so is this one, now, not after a wait of its own
                CACHE.refused += 1
                await _answer(scope, send, refusal)
                return None
            if await self._kept(scope, send, key, ttl):
                return None
        mine: asyncio.Future[Entry | None] | None = None
        if live and leader is None:
            mine = asyncio.get_running_loop().create_future()
            CACHE.inflight[key] = mine
        refused = None
        try:
            refused = await self._through(scope, receive, send, key, CACHE.generation if live else -1)
        finally:
            if mine is not None:
                if CACHE.inflight.get(key) is mine:
                    del CACHE.inflight[key]
                mine.set_result(refused)

    @staticmethod
    async def _kept(scope: Scope, send: Send, key: bytes, ttl: float) -> bool:
        """Answered from what is kept for this read, if fresh and the caller may have it."""
        entry = CACHE.entries.get(key)
        if entry is not None and entry.generation == CACHE.generation and time.monotonic() - entry.at <= ttl \
                and await _viewer(scope):
            CACHE.hits += 1
            await _answer(scope, send, entry)
            return True
        return False

    async def _through(self, scope: Scope, receive: Receive, send: Send, key: bytes, generation: int
                       ) -> Entry | None:
        """The full way; its answer kept when it may be. Returns the answer if it was a busy refusal (503 with
        Retry-After, whoever made it: admission, the dashboard's deadline, a hung database), for the reads that
        waited on this one."""
        CACHE.misses += 1
        start: Message | None = None
        chunks: list[bytes] = []
        size = 0
        at = time.monotonic()
        refusal: Entry | None = None

        async def keep(message: Message) -> None:
            nonlocal start, size, refusal
            if message["type"] == "http.response.start":
                start = message
            elif message["type"] == "http.response.body" and start is not None and size <= ENTRY_MAX:
                body = message.get("body", b"")
                chunks.append(body)
                size += len(body)
                if not message.get("more_body", False) and size <= ENTRY_MAX and generation >= 0:
                    headers = list(start.get("headers", []))
                    named = dict((k.lower(), v) for k, v in headers)
                    ctype = named.get(b"content-type", b"")
                    if start["status"] == 200 and b"set-cookie" not in named and ctype.startswith(
                            b"application/json"):
                        CACHE.put(key, Entry(at, generation, headers, b"".join(chunks), named.get(b"etag")))
                    elif start["status"] == 503 and b"retry-after" in named:
                        refusal = Entry(at, generation, headers, b"".join(chunks), None, status=503)
            await send(message)

        await self.app(scope, receive, keep)
        return refusal


async def _answer(scope: Scope, send: Send, entry: Entry) -> None:
    if entry.etag is not None:
        sent = dict(scope["headers"]).get(b"if-none-match", b"")
        tags = [t.strip().removeprefix(b"W/") for t in sent.split(b",")] if sent else []
        # weak or strong, the tag names the same bytes (the hosts list's is weak: W/"...")
        if entry.etag.removeprefix(b"W/") in tags or b"*" in tags:
            headers = [(k, v) for k, v in entry.headers if k.lower() in (b"etag", b"cache-control")]
            await send({"type": "http.response.start", "status": 304, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
    await send({"type": "http.response.start", "status": entry.status, "headers": entry.headers})
    await send({"type": "http.response.body", "body": entry.body})
