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
- dashboard: everything else under /api/, including the opening of a live stream (the slot is given back when
  the response starts, so an open stream holds none).
"""
import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.db import POOL_SIZE, RUNNER_POOL_SIZE
from app.core.errors import TooMany


@dataclass
class Gate:
    name: str
    slots: int
    wait_s: float
    max_waiting: int
    _sem: asyncio.Semaphore | None = None
    waiting: int = 0
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
        self.waiting += 1
        try:
            await asyncio.wait_for(self.sem.acquire(), self.wait_s)
            return True
        except TimeoutError:
            self.refused += 1
            return False
        finally:
            self.waiting -= 1

    def leave(self) -> None:
        self.sem.release()


def _env(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


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
        """The watcher for this process's event loop; app.main's lifespan starts it and cancels it."""
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
DASHBOARD_SHED_LAG_S = _env("HOSTBENCH_DASHBOARD_SHED_LAG_S", 0.25)


GATES = {
    "run": Gate("run", 4, _env("HOSTBENCH_RUNNER_WAIT_S", 3.0), 2000),
    "runner": Gate("runner", max(2, RUNNER_POOL_SIZE - 4), _env("HOSTBENCH_RUNNER_WAIT_S", 3.0), 2000),
    "poll": Gate("poll", 4, _env("HOSTBENCH_POLL_WAIT_S", 8.0), 5000),
    "dashboard": Gate("dashboard", POOL_SIZE + POOL_SIZE // 2 - 2, _env("HOSTBENCH_DASHBOARD_WAIT_S", 2.0), 1000),
}
THREADS = sum(g.slots for g in GATES.values()) + 8  # a thread for every admitted request, and some to spare


_RUN_LIFE = ("/start", "/lease", "/listening", "/finish")


def gate_of(path: str) -> str | None:
    if not path.startswith("/api/"):
        return None  # the dashboard's static files
    if path == "/api/runner/work":
        return None  # the long poll admits its database steps itself (slot("poll"))
    if path.startswith("/api/runner/runs/") and path.endswith(_RUN_LIFE):
        return "run"
    if path.startswith(("/api/runner/", "/api/runners/")):
        return "runner"
    return "dashboard"


class Busy(TooMany):
    status_code = 503

    def __init__(self, gate: str):
        super().__init__(f"the server is busy ({gate} requests); retry shortly", retry_after_s=1)


@asynccontextmanager
async def slot(name: str) -> AsyncIterator[None]:
    """For a route the middleware does not gate: hold a slot of `name` around its database steps."""
    gate = GATES[name]
    if not await gate.enter():
        raise Busy(name)
    try:
        yield
    finally:
        gate.leave()


_BUSY_BODY = json.dumps({"detail": "the server is busy; retry shortly"}).encode()


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
        shed = name == "dashboard" and LAG.lag_s > DASHBOARD_SHED_LAG_S and scope["path"] != "/api/health"
        if shed:
            gate.refused += 1
        if shed or not await gate.enter():
            await send({"type": "http.response.start", "status": 503, "headers": [
                (b"content-type", b"application/json"), (b"retry-after", b"1"),
                (b"content-length", str(len(_BUSY_BODY)).encode())]})
            await send({"type": "http.response.body", "body": _BUSY_BODY})
            return
        held = True

        async def send_and_release(message: Message) -> None:
            nonlocal held
            if held and message["type"] == "http.response.start":
                held = False
                gate.leave()
            await send(message)

        try:
            await self.app(scope, receive, send_and_release)
        finally:
            if held:
                gate.leave()
