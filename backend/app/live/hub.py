"""One Redis subscription per API process, shared by every long poll and live stream it serves.

A subscriber gets an asyncio queue for a channel (app.core.broker's names). One reader task holds a single
pattern subscription (hb:*) and hands each message to the queues of its channel; a message for a channel
nobody here listens to is dropped without being decoded. So 1,000 idle long polls and 500 streams cost one
Redis connection per process, not 1,500, and any API process sees what any other (or a Celery task) published:
that is what lets several API processes serve the same run (docs/scaling.md).

A subscriber whose queue overflowed, or that was subscribed while the connection broke, is told so (`lost`):
it re-reads PostgreSQL, which stays the truth; Redis only makes things fast."""
import asyncio
import logging
import time
import weakref
from dataclasses import dataclass, field

from app.core import broker

log = logging.getLogger("hostbench.live")
PATTERN = "hb:*"
QUEUE_MAX = 512
PING_S = 2.0  # the reader PINGs Redis this often on its subscription...
SILENT_S = 5.0  # ...and takes a Redis that has said nothing for this long as hung: subscribers re-read PostgreSQL


@dataclass(eq=False)
class Subscription:
    channel: str
    queue: asyncio.Queue = field(default_factory=lambda: asyncio.Queue(QUEUE_MAX))
    lost: bool = False  # a message may have been missed: re-read PostgreSQL

    async def get(self, timeout: float) -> bytes | None:
        """The next message's data, or None after `timeout` s (or at once when the hub is down)."""
        if not self.queue.empty():
            return self.queue.get_nowait()  # (a stream catching up: no timer at all)
        try:
            # asyncio.timeout, not wait_for: wait_for wraps the get in a task of its own, created and cancelled on
            # every call, which with 500 streams was 7 % of a dashboard process's event loop (py-spy, issue 11)
            async with asyncio.timeout(timeout):
                return await self.queue.get()
        except TimeoutError:
            return None


class Hub:
    def __init__(self) -> None:
        self.subs: dict[str, set[Subscription]] = {}
        self.task: asyncio.Task | None = None
        self.up = asyncio.Event()

    def subscribe(self, channel: str) -> Subscription:
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._read())
        sub = Subscription(channel)
        self.subs.setdefault(channel, set()).add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        subs = self.subs.get(sub.channel)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self.subs[sub.channel]

    async def ready(self, timeout: float = 2.0) -> bool:
        """True once the pattern subscription is live (messages published from now on arrive)."""
        try:
            await asyncio.wait_for(self.up.wait(), timeout)
            return True
        except TimeoutError:
            return False

    def _lose_all(self) -> None:
        for subs in self.subs.values():
            for s in subs:
                s.lost = True
                if s.queue.empty():
                    s.queue.put_nowait(b"")  # wake it: it re-reads PostgreSQL

    async def _read(self) -> None:
        delay = 0.5
        while True:
            pubsub = broker.get_async_redis().pubsub()
            try:
                await pubsub.psubscribe(PATTERN)
                heard = pinged = time.monotonic()
                while True:
                    msg = await pubsub.get_message(timeout=1.0)
                    now = time.monotonic()
                    if msg is None:
                        if now - heard > SILENT_S:  # a hung Redis (SIGSTOP) refuses nothing; it just says nothing
                            raise TimeoutError(f"Redis said nothing for {now - heard:.0f} s (not even PONG)")
                        if now - pinged >= PING_S:
                            await pubsub.ping()
                            pinged = now
                        continue
                    heard = now
                    if msg["type"] != "pmessage":
                        if msg["type"] == "psubscribe":
                            self.up.set()  # confirmed: whatever is published from now on reaches us
                        continue
                    delay = 0.5
                    channel = msg["channel"].decode() if isinstance(msg["channel"], bytes) else msg["channel"]
                    for s in self.subs.get(channel, ()):
                        try:
                            s.queue.put_nowait(msg["data"])
                        except asyncio.QueueFull:
                            s.lost = True
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - Redis gone: everyone re-reads PostgreSQL until it is back
                if self.up.is_set():
                    log.warning("live hub lost Redis (%s: %s); subscribers fall back to PostgreSQL",
                                type(exc).__name__, exc)
                self.up.clear()
                self._lose_all()
            finally:
                try:
                    await pubsub.aclose()
                except Exception:  # noqa: BLE001, S110
                    pass
            await asyncio.sleep(delay)
            delay = min(5.0, delay * 2)


_hubs: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Hub]" = weakref.WeakKeyDictionary()


def hub() -> Hub:
    """This event loop's hub (one per API process; a test client's loop gets its own)."""
    loop = asyncio.get_running_loop()
    h = _hubs.get(loop)
    if h is None:
        h = _hubs[loop] = Hub()
    return h
