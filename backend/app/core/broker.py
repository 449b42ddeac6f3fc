"""Redis: the Celery broker and the live fan-out bus. Channel names live here and nowhere else.

PostgreSQL is the truth; Redis only rings and fans out (docs/reliability.md, rule 2). So nothing a request
does waits on Redis: publishes and doorbells are handed to one sender thread per process (`later`), which
delivers them in order while Redis answers and drops them, counted, while it does not (the reconciler re-rings
what a lost doorbell left queued, a live stream re-reads PostgreSQL on any gap). The few calls that must ask
Redis inline (live-stream slots, sign-in counters) have a timeout of REDIS_TIMEOUT_S and a local fallback."""
import atexit
import json
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import redis
import redis.asyncio as aioredis

from app.core.config import get_settings

log = logging.getLogger("hostbench.broker")
REDIS_TIMEOUT_S = 1.5  # an inline Redis call (slots, sign-in counters) gives up after this long
SEND_QUEUE_MAX = 10_000  # publishes and doorbells waiting for the sender thread; beyond, new ones are dropped


def run_channel(run_id: int) -> str:
    return f"hb:run:{run_id}"


def host_work_channel(host_id: int) -> str:
    return f"hb:host:{host_id}:work"


@lru_cache
def get_redis() -> redis.Redis:
    return redis.Redis.from_url(get_settings().redis_url, socket_timeout=REDIS_TIMEOUT_S,
                                socket_connect_timeout=REDIS_TIMEOUT_S)


def get_async_redis() -> aioredis.Redis:
    return aioredis.Redis.from_url(get_settings().redis_url, socket_connect_timeout=5)


class Sender:
    """One thread per process that does the Redis calls requests hand it, in order. Started on first use in each
    process (a Celery prefork child gets its own); at exit it is given a moment to deliver what is queued."""

    def __init__(self) -> None:
        self._q: queue.Queue[Callable[[], object]] = queue.Queue(SEND_QUEUE_MAX)
        self._pid = 0
        self._lock = threading.Lock()
        self.dropped = 0
        self.failed = 0
        self._last_warning = 0.0

    def put(self, fn: Callable[[], object]) -> None:
        if self._pid != os.getpid():
            with self._lock:
                if self._pid != os.getpid():
                    self._q = queue.Queue(SEND_QUEUE_MAX)  # a forked child: the parent's thread is not here
                    threading.Thread(target=self._run, name="hostbench-broker-sender", daemon=True).start()
                    self._pid = os.getpid()
        try:
            self._q.put_nowait(fn)
        except queue.Full:
            self.dropped += 1
            self._warn(f"{self.dropped} Redis publishes dropped so far: Redis is not keeping up or not answering")

    def _warn(self, message: str) -> None:
        if time.monotonic() - self._last_warning > 30:
            self._last_warning = time.monotonic()
            log.warning(message)

    def _run(self) -> None:
        while True:
            fn = self._q.get()
            try:
                fn()
            except Exception as exc:  # noqa: BLE001 - best effort; PostgreSQL holds the truth
                self.failed += 1
                self._warn(f"a Redis publish failed ({type(exc).__name__}: {str(exc)[:200]}); "
                           f"{self.failed} so far; live views re-read PostgreSQL, the reconciler re-rings")
            finally:
                self._q.task_done()

    def flush(self, timeout: float) -> bool:
        """Wait up to `timeout` s for what is queued to be delivered (tests, and process exit)."""
        deadline = time.monotonic() + timeout
        while self._q.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)
        return not self._q.unfinished_tasks


SENDER = Sender()
atexit.register(SENDER.flush, 2.0)


def later(fn: Callable[[], object]) -> None:
    """Do this Redis call on the sender thread: never in the caller's time."""
    SENDER.put(fn)


def publish(channel: str, message: dict[str, Any]) -> None:
    """Best effort, off the caller's time: a lost publish only delays a browser until its next re-read."""
    data = json.dumps(message, default=str)
    later(lambda: get_redis().publish(channel, data))
