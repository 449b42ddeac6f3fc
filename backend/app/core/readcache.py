"""Dashboard reads answered from the bytes of the same read made a moment ago (issue 31: reads per second).

A dashboard asks again and again for what has not changed: History's first page, the hosts page, the run and host
a dozen viewers look at. Each such GET cost the full way (admission, a worker thread, FastAPI's dependencies, the
credential, one to three queries, the ORM, serialisation); the answer's bytes were the same. This middleware keeps
the answer's bytes, per process, for the few reads in CACHED (the same answer for every viewer: none of their
handlers looks at who asks), and answers the same read again from them, in the event loop, before admission:

- only while fresh: at most `HOSTBENCH_READ_CACHE_S` old (1 s; 0 turns the cache off) and made in the current
  generation. The generation moves at once in this process with every write it serves (any method but GET/HEAD),
  and in every API process when a dashboard write anywhere publishes on Redis (READS_CHANNEL: a job created, labels
  or peaks changed, a run cancelled, a host revoked...). What the runners change (samples, progress, a run's end,
  heartbeats) arrives in the control processes, which do not publish: a read shows it at most that 1 s late, as
  the dashboard's live streams and polls already do; but a run's change of state (started, ended: app.jobs.service.
  publish_run), on which a page re-reads at once, drops what every process keeps before its watchers hear of it.
  While this process's Redis subscription is not live (app.live.hub), nothing is served from the cache: a missed
  message could leave an answer stale;
- only to a caller whose credential this process checked within its credential cache's life and epoch
  (app.users.auth.CREDENTIALS: a revocation anywhere ends it at once), with the viewer role at least; anyone else
  goes the full way, which checks them and answers (or refuses) as before;
- with the ETag the handler gave, and a 304 to an If-None-Match that names it;
- once per burst: a read that arrives while the same read is going the full way waits for that one's answer (at
  most HOSTBENCH_DASHBOARD_DEADLINE_S) instead of going the full way too.

What is kept: 200 answers of JSON, with no cookie set, of at most ENTRY_MAX bytes; at most TOTAL_MAX bytes in
all (beyond it the cache starts again empty). Requests that need PostgreSQL still get it; a hit needs none."""
import asyncio
import re
import time
import weakref
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core import broker
from app.core.config import get_settings

# The reads kept: a path that matches, whatever its query (the key is path and query). Each one's handler answers
# every viewer the same (it takes the viewer role and never reads who the caller is).
CACHED = re.compile(r"^/api/(runs|runs/\d{1,12}|runs/\d{1,12}/samples|hosts|hosts/\d{1,12})$")
# Writes that do not tell the other processes (they still move this process's generation): the runners' calls,
# which change what the next reads show within the cache's life anyway, two hundred times a second.
QUIET_WRITES = ("/api/runner/", "/api/runners/")
READS_CHANNEL = "hb:reads:changed"  # a dashboard write was answered: every process drops what it keeps
ENTRY_MAX = 4 << 20
TOTAL_MAX = 64 << 20


@dataclass
class Entry:
    at: float
    generation: int
    headers: list[tuple[bytes, bytes]]
    body: bytes
    etag: bytes | None


@dataclass
class ReadCache:
    entries: dict[bytes, Entry] = field(default_factory=dict)
    generation: int = 0
    size: int = 0
    hits: int = 0
    misses: int = 0  # reads that went the full way, their answer then kept or not
    # a read going the full way now, per key: the same read arriving meanwhile waits for its answer instead of
    # going the full way too (a burst of one read costs one read)
    inflight: dict[bytes, asyncio.Future] = field(default_factory=dict)

    def changed(self) -> None:
        self.generation += 1
        self.entries.clear()
        self.size = 0

    def put(self, key: bytes, entry: Entry) -> None:
        if entry.generation != self.generation:
            return  # a write came while it was being made: it may be stale already
        if self.size + len(entry.body) > TOTAL_MAX:
            self.entries.clear()
            self.size = 0
        old = self.entries.get(key)
        self.size += len(entry.body) - (len(old.body) if old else 0)
        self.entries[key] = entry


CACHE = ReadCache()


def published_change() -> None:
    """Tell every API process that what it keeps may be stale (off the caller's time, app.core.broker)."""
    broker.publish(READS_CHANNEL, {"at": time.time()})


def changed_everywhere() -> None:
    """What this process and every other keeps may be stale: a run's state moved (app.jobs.service.publish_run),
    which a page re-reads on at once. (A write through the dashboard says so by itself: ReadCacheMiddleware.)"""
    CACHE.changed()
    published_change()


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


class ReadCacheMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
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
            try:  # the same read is on its way: its answer, once kept, serves this one too
                async with asyncio.timeout(get_settings().hostbench_dashboard_deadline_s):
                    await asyncio.shield(leader)
            except TimeoutError:
                pass
            if await self._kept(scope, send, key, ttl):
                return None
        mine = asyncio.get_running_loop().create_future() if live and leader is None else None
        if mine is not None:
            CACHE.inflight[key] = mine
        try:
            await self._through(scope, receive, send, key, CACHE.generation if live else -1)
        finally:
            if mine is not None:
                if CACHE.inflight.get(key) is mine:
                    del CACHE.inflight[key]
                mine.set_result(None)

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

    async def _through(self, scope: Scope, receive: Receive, send: Send, key: bytes, generation: int) -> None:
        """The full way; its answer kept when it may be."""
        CACHE.misses += 1
        start: Message | None = None
        chunks: list[bytes] = []
        size = 0
        at = time.monotonic()

        async def keep(message: Message) -> None:
            nonlocal start, size
            if message["type"] == "http.response.start":
                start = message
            elif message["type"] == "http.response.body" and start is not None and size <= ENTRY_MAX:
                body = message.get("body", b"")
                chunks.append(body)
                size += len(body)
                if not message.get("more_body", False) and size <= ENTRY_MAX and generation >= 0:
                    headers = list(start.get("headers", []))
                    names = {k.lower() for k, _ in headers}
                    ctype = dict((k.lower(), v) for k, v in headers).get(b"content-type", b"")
                    if start["status"] == 200 and b"set-cookie" not in names and ctype.startswith(
                            b"application/json"):
                        etag = dict((k.lower(), v) for k, v in headers).get(b"etag")
                        CACHE.put(key, Entry(at, generation, headers, b"".join(chunks), etag))
            await send(message)

        await self.app(scope, receive, keep)


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
    await send({"type": "http.response.start", "status": 200, "headers": entry.headers})
    await send({"type": "http.response.body", "body": entry.body})
