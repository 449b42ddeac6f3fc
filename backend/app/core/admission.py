"""Admission control: how many requests of each kind are inside the application at once.

Every handler that touches PostgreSQL runs in a worker thread and holds one pooled connection. If more requests
enter than there are connections, the extra threads wait on the pool, and a connection comes back only when a
thread is free to finish its request: the whole API freezes (issue 11: 100 simultaneous reads froze it for 30 s).
So requests wait *here*, in the event loop, where waiting costs nothing, for a slot of their class; a class has
no more slots than its connection pool has connections (app.core.db), so a request that got in never waits for
a connection. One that finds no slot within its class's wait gets 503 with Retry-After at once.

Classes, each with its own slots and its own connection pool (docs/architecture.md, "Concurrency"):
- run: the calls a running benchmark's life depends on (start, lease renewal, listening, finish): a renewal
  that cannot get in for the lease's length fails the run, so they never queue behind heartbeats or uploads;
- runner: the runners' other calls (heartbeat, samples, registration, credential rotation); never starved by
  the dashboard;
- poll: the database steps of the runners' long polls (the wait itself holds nothing: it listens on Redis);
- stream: the opening of a live stream (the slot is given back when the response starts, so an open stream holds
  none);
- dashboard: everything else under /api/.

GET /api/health takes no slot and is never refused here, nor answered 503 while PostgreSQL hangs: an orchestrator's
liveness probe must get 200 within 2 s while the server is alive (issue 31). It needs no slot: however many probes
come, they share one database query and one Redis PING (app.health). It had two slots of its own, waited for at most
1.5 s: the load's dashboard reads include /api/health (40 a second at 1,000 reads a second), and a busy process
answered the probe 503 "the server is busy" after that wait.

While PostgreSQL is hung (app.core.dbwatch), a request that needs it is refused at once with 503 and
`X-Hostbench-Unavailable: database`, and one already inside that has been waiting STALLED_ANSWER_S is answered
the same way at once; its thread finishes, and gives its slot back, when PostgreSQL answers again. So no request
waits on a hung database for longer than the watcher needs to see the hang (docs/reliability.md, rule 12).
"""
import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.config import get_settings
from app.core.db import POOL_SIZE, RUNNER_POOL_SIZE
from app.core.dbwatch import DB_WATCH
from app.core.errors import DB_RETRY_AFTER_S, TooMany, Unavailable


@dataclass
class Gate:
    name: str
    slots: int
    wait_s: float
    max_waiting: int
    _sem: asyncio.Semaphore | None = None
    waiting: int = 0
    inside: int = 0  # admitted and not yet answering
    refused: int = 0

    @property
    def sem(self) -> asyncio.Semaphore:
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.slots)
        return self._sem

    async def enter(self) -> bool:
        if self.waiting >= self.max_waiting:
            self.refused += 1
            return False
        if not self.sem.locked():  # a free slot: taken at once, without a timer
            await self.sem.acquire()
            self.inside += 1
            return True
        self.waiting += 1
        try:
            async with asyncio.timeout(self.wait_s):
                await self.sem.acquire()
            self.inside += 1
            return True
        except TimeoutError:
            self.refused += 1
            return False
        finally:
            self.waiting -= 1

    def leave(self) -> None:
        self.inside -= 1
        self.sem.release()

    def crowded(self) -> bool:
        """Enough of this class's requests inside or waiting that refusing some frees CPU for the rest."""
        return self.inside + self.waiting >= DASHBOARD_SHED_MIN


class LoopLag:
    """How late this process's event loop runs a timer: the time a request that just arrived waits for the CPU
    before anything of it runs. Above DASHBOARD_SHED_LAG_S the process is out of CPU, and the dashboard's
    requests are refused at once (503) instead of queueing: what is left of the CPU goes to the runners, whose
    lease renewals fail a benchmark when they come too late (issue 11: a dashboard stampede must not)."""

    def __init__(self, period_s: float = 0.05):
        self.period_s = period_s
        self.lag_s = 0.0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> asyncio.Task[None]:
        """The watcher for this process's event loop; app.reconciler's lifespan starts it and cancels it."""
        self._task = asyncio.get_running_loop().create_task(self._watch())
        return self._task

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            t0 = loop.time()
            await asyncio.sleep(self.period_s)
            late = loop.time() - t0 - self.period_s
            # rise at once, fall slowly: one quick tick in a saturated loop does not reopen the gate
            self.lag_s = late if late > self.lag_s else 0.8 * self.lag_s + 0.2 * late


LAG = LoopLag()
DASHBOARD_SHED_LAG_S = get_settings().hostbench_dashboard_shed_lag_s
# A late event loop alone is not overload: on a small server the benchmarks themselves take the CPU (a 2-thread
# run on 2 cores), and then a person's few requests were refused although refusing them saved nothing (the
# browser suite's History read, a suite import: 503 "server is busy" with one request in flight). The dashboard
# is shed only while it is also crowded: this many of its requests inside or waiting (a stampede has hundreds).
DASHBOARD_SHED_MIN = get_settings().hostbench_dashboard_shed_min


# The dashboard's slots are a matter of the interpreter's lock, not of connections: its handlers are mostly Python
# (the ORM, the response models), and one process runs one thread of Python at a time. Sixteen of them at once (the
# pool's size, until 2026-11-28) took the lock from the event loop, which then ran seconds late: a burst of 1,000
# reads on top of the full load waited up to 8.6 s for its answers, 517 of them over 5 s, and lease renewals in the
# other process 1.1-1.4 s at p99; with 6, 5.3 s, 31 over 5 s, and 0.43 s (./hostbench load, docs/scaling.md).
# More throughput per process comes from more processes (HOSTBENCH_API_WORKERS), not more threads in one.
# A dashboard request waits at most 1 s for a slot (it was 2 s): under a stampede a longer wait serves no more
# requests, it only delays the refusals (the same burst: max 3.2 s, none over 5 s); the dashboard retries a 503
# after its Retry-After.
GATES = {
    "run": Gate("run", 4, get_settings().hostbench_runner_wait_s, 2000),
    "runner": Gate("runner", max(2, RUNNER_POOL_SIZE - 4), get_settings().hostbench_runner_wait_s, 2000),
    "poll": Gate("poll", 4, get_settings().hostbench_poll_wait_s, 5000),
    "dashboard": Gate("dashboard", min(get_settings().hostbench_dashboard_slots, POOL_SIZE + POOL_SIZE // 2 - 2),
                      get_settings().hostbench_dashboard_wait_s, 1000),
    # Opening a live stream (its snapshot read; the open stream holds no slot): its own few slots, so a person's
    # live view is not refused behind a stampede of other reads (the full load: 2,091 opens refused with 503 and
    # 302 of 500 streams open at the end while they shared the dashboard's slots)
    "stream": Gate("stream", 3, get_settings().hostbench_stream_wait_s, 1000),
}
THREADS = sum(g.slots for g in GATES.values()) + 8  # a thread for every admitted request, and some to spare


HEALTH_PATH = "/api/health"
_RUN_LIFE = ("/start", "/lease", "/listening", "/finish", "/closed")


def gate_of(path: str) -> str | None:
    if not path.startswith("/api/"):
        return None  # the dashboard's static files
    if path == "/api/runner/work":
        return None  # the long poll admits its database steps itself (slot("poll"))
    if path.startswith("/api/runner/runs/") and path.endswith(_RUN_LIFE):
        return "run"
    if path.startswith(("/api/runner/", "/api/runners/")):
        return "runner"
    if path.startswith("/api/runs/") and path.endswith("/events"):
        return "stream"
    if path == HEALTH_PATH:
        return None  # never refused, never waits: its probes share one query (app.health)
    return "dashboard"


class Busy(TooMany):
    status_code = 503

    def __init__(self, gate: str):
        super().__init__(f"the server is busy ({gate} requests); retry shortly", retry_after_s=1)


class DatabaseHung(Unavailable):
    def __init__(self) -> None:
        super().__init__(f"the database is not answering ({DB_WATCH.state().detail}); retry shortly", "database")


def database_hung() -> bool:
    """PostgreSQL connected but not answering, as the watcher sees it, in a process whose event loop is on time
    (a process starved of CPU makes every probe look slow: its requests then queue as they would anyway)."""
    return DB_WATCH.running and LAG.lag_s < DASHBOARD_SHED_LAG_S and DB_WATCH.state().hung


STALLED_ANSWER_S = 0.3  # a request inside while PostgreSQL hangs is answered 503 after this long
# A dashboard request that has not begun its answer this long after it reached admission, while the process is
# short of CPU (its event loop late by more than DASHBOARD_SHED_LAG_S) and crowded (DASHBOARD_SHED_MIN), is
# answered 503 with Retry-After at once; its thread finishes, and gives its slot back, later. Under overload an
# admitted request otherwise queued for the GIL behind the rest for 15-25 s (./hostbench load, full target,
# 2026-11-26): a person's browser retries a 503 sooner than it gives up on a silent request. With CPU to spare, or
# with few requests, nothing is cut short (a long export).
DASHBOARD_DEADLINE_S = get_settings().hostbench_dashboard_deadline_s


# Where a request's time went inside this process, when HOSTBENCH_SERVER_TIMING is on (app.readserve puts the dict in
# the scope and writes the Server-Timing header): when (time.monotonic) admission saw the request, and when it was
# admitted or refused.
TIMING = "hostbench.timing"


def _stamp(scope: Scope, what: str) -> None:
    timing = scope.get(TIMING)
    if timing is not None:
        timing[what] = time.monotonic()


@asynccontextmanager
async def slot(name: str) -> AsyncIterator[None]:
    """For a route the middleware does not gate: hold a slot of `name` around its database steps."""
    if database_hung():
        raise DatabaseHung()
    gate = GATES[name]
    if not await gate.enter():
        raise Busy(name)
    try:
        yield
    finally:
        gate.leave()


_BUSY_BODY = json.dumps({"detail": "the server is busy; retry shortly"}).encode()


async def _refuse(send: Send, status: int, body: bytes, retry_after_s: int, unavailable: str | None = None) -> None:
    headers = [(b"content-type", b"application/json"), (b"retry-after", str(retry_after_s).encode()),
               (b"content-length", str(len(body)).encode())]
    if unavailable:
        headers.append((b"x-hostbench-unavailable", unavailable.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _hung_body() -> bytes:
    return json.dumps({"detail": f"the database is not answering ({DB_WATCH.state().detail}); retry "
                                 f"shortly"}).encode()


class Admission:
    """Pure ASGI middleware: a slot of the request's class from entry until its response starts."""

    def __init__(self, app: ASGIApp):
        self.app = app
        self._threads_sized = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not self._threads_sized:
            import anyio.to_thread

            limiter = anyio.to_thread.current_default_thread_limiter()
            limiter.total_tokens = max(limiter.total_tokens, THREADS)
            self._threads_sized = True
        name = gate_of(scope["path"])
        if name is None:
            await self.app(scope, receive, send)
            return
        gate = GATES[name]
        _stamp(scope, "admission")
        if database_hung():
            gate.refused += 1
            await _refuse(send, 503, _hung_body(), DB_RETRY_AFTER_S, "database")
            return
        shed = name == "dashboard" and LAG.lag_s > DASHBOARD_SHED_LAG_S and gate.crowded()
        if shed:
            gate.refused += 1
        t0 = asyncio.get_running_loop().time()
        if shed or not await gate.enter():
            _stamp(scope, "refused")
            await _refuse(send, 503, _BUSY_BODY, 1)
            return
        _stamp(scope, "admitted")
        held, started, answered = True, False, False

        async def send_and_release(message: Message) -> None:
            nonlocal held, started
            if held and message["type"] == "http.response.start":
                held = False
                gate.leave()
            if answered:
                return  # answered 503 while PostgreSQL hung: what the request says once it resumes goes nowhere
            started = True
            await send(message)

        async def inner() -> None:
            try:
                await self.app(scope, receive, send_and_release)
            finally:
                if held:
                    gate.leave()

        task = asyncio.ensure_future(inner())
        t_in = asyncio.get_running_loop().time()
        while True:
            try:
                done, _ = await asyncio.wait({task}, timeout=0.25)
            except asyncio.CancelledError:
                task.cancel()
                raise
            if done or started:
                break
            now = asyncio.get_running_loop().time()
            if now - t_in >= STALLED_ANSWER_S and database_hung():
                answered = True
                task.add_done_callback(_forget)
                await _refuse(send, 503, _hung_body(), DB_RETRY_AFTER_S, "database")
                return
            if (name == "dashboard" and now - t0 >= DASHBOARD_DEADLINE_S and LAG.lag_s > DASHBOARD_SHED_LAG_S
                    and gate.crowded()):
                answered = True
                gate.refused += 1
                task.add_done_callback(_forget)
                await _refuse(send, 503, _BUSY_BODY, 1)
                return
        await task


def _forget(task: "asyncio.Future[None]") -> None:
    """A request answered while PostgreSQL hung ends later; its outcome went to nobody (retrieved, not logged)."""
    if not task.cancelled():
        task.exception()
