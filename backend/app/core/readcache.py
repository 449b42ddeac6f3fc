"""Dashboard reads answered from the bytes of the same read made a moment ago (issue 31: reads per second).

A dashboard asks again and again for what has not changed: History's first page, the hosts page, the run and host
a dozen viewers look at. Each such GET cost the full way (admission, a worker thread, FastAPI's dependencies, the
credential, one to three queries, the ORM, serialisation); the answer's bytes were the same. A middleware
(app.readserve) keeps the answer's bytes, per process, for the few reads in CACHED (the same answer for every
viewer: none of their handlers looks at who asks), and answers the same read again from them, in the event loop,
before admission:

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
  most HOSTBENCH_DASHBOARD_DEADLINE_S) instead of going the full way too; and if that one is refused because the
  server is busy (a 503 with Retry-After: no admission slot in time, the dashboard shed, PostgreSQL hung), each
  read waiting on it is answered the same refusal at once, instead of then going the full way itself to wait for a
  slot and be refused in turn (a saturated process refused a burst of 1,000 one by one, each after its own wait).

What is kept: 200 answers of JSON, with no cookie set, of at most ENTRY_MAX bytes; at most TOTAL_MAX bytes in
all (beyond it the cache starts again empty). Requests that need PostgreSQL still get it; a hit needs none."""
import asyncio
import re
import time
from dataclasses import dataclass, field

from app.core import broker

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
    status: int = 200  # kept: 200; a busy refusal handed to the reads that waited on it: 503


@dataclass
class ReadCache:
    entries: dict[bytes, Entry] = field(default_factory=dict)
    generation: int = 0
    size: int = 0
    hits: int = 0
    misses: int = 0  # reads that went the full way, their answer then kept or not
    refused: int = 0  # reads that waited on the same read going the full way and were answered its busy refusal
    # a read going the full way now, per key: the same read arriving meanwhile waits for its answer instead of
    # going the full way too (a burst of one read costs one read); its result is that read's busy refusal, if it
    # was refused (then the waiters are refused too, at once), else None
    inflight: dict[bytes, "asyncio.Future[Entry | None]"] = field(default_factory=dict)

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
