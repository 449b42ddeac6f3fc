"""./hostbench load: the real stack under a fleet's load, from one asyncio process.

It starts the stack as `./hostbench test` does (embedded PostgreSQL and Redis, migrations, the API, a Celery
worker and beat; no real runner), then:

1. registers N simulated runners through the real protocol (an admin's registration token each, then
   POST /api/runners/register) and lets them idle: a long poll on GET /api/runner/work, a heartbeat every 5 s;
   the API's CPU is measured for this idle phase alone;
2. gives R of them a cpu_trace run each (real jobs, dispatched by the real Celery doorbell). A runner that is
   handed a run behaves like hostbench_runner: start, a lease renewal every 5 s, samples with the kernel's
   fields at --rate per second into a spool, a batch of at most 1,000 sent every --upload-interval, a batch the
   server did not acknowledge (5xx, 429, timeout) kept and sent again after a backoff that honours Retry-After;
3. opens M browser-like live streams (SSE, viewer users' API tokens) on the running runs and sends dashboard
   reads at --reads per second (open loop: a slow answer does not slow the offered rate);
4. optionally fires bursts of K simultaneous GET /api/hosts/1 (--burst 100,1000) while the runs go on;
5. stops the samples, drains every spool, finishes the runs, and compares the samples PostgreSQL holds with
   the samples the API acknowledged, run by run: any difference fails the command (exit 1).

The HTTP client is a small HTTP/1.1 keep-alive client on asyncio streams (this module), not httpx: on a
2-core machine the load generator shares the CPU with the stack, and its per-request cost is what decides how
much load one process can offer. It prints a table, then one JSON line."""
import argparse
import asyncio
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hostbench_cli import STATE

VERSION = "load-0.1"
BATCH_MAX = 1000  # the runner's upload_batch_max and the API's per-request bound
HEARTBEAT_S = 5.0
LEASE_RENEW_S = 5.0
POLL_WAIT_S = 20
REQUEST_TIMEOUT_S = 10.0  # the runner's http_timeout_s
BROWSER_CONNS = 6  # connections a browser opens to one server (HTTP/1.1)
STREAM_RETRY_MIN_S, STREAM_RETRY_MAX_S = 1.0, 15.0  # the dashboard's RECONNECT_MIN_MS / RECONNECT_MAX_MS


# --- a small HTTP/1.1 client ---------------------------------------------------------------------------------

class HttpFailure(Exception):
    """No answer: refused, reset, closed or timed out."""


class Conn:
    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port, limit=1 << 22)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def send(self, method: str, path: str, headers: dict[str, str], body: bytes | None) -> None:
        if self.writer is None:
            await self.open()
        assert self.writer is not None
        head = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        head += [f"{k}: {v}" for k, v in headers.items()]
        if body is not None:
            head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        elif method == "POST":
            head.append("Content-Length: 0")
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + (body or b""))
        await self.writer.drain()

    async def read_head(self) -> tuple[int, dict[str, str]]:
        assert self.reader is not None
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        hdrs = {}
        for ln in lines[1:]:
            if ":" in ln:
                k, v = ln.split(":", 1)
                hdrs[k.strip().lower()] = v.strip()
        return status, hdrs

    async def read_body(self, hdrs: dict[str, str], status: int = 200) -> bytes:
        assert self.reader is not None
        if status in (204, 304) or 100 <= status < 200:
            return b""  # no body by definition (RFC 9112 6.3): reading to EOF waited for the server's idle close
        if "content-length" in hdrs:
            return await self.reader.readexactly(int(hdrs["content-length"]))
        if hdrs.get("transfer-encoding", "").lower() == "chunked":
            out: list[bytes] = []
            while True:
                size = int((await self.reader.readline()).split(b";")[0].strip(), 16)
                if size == 0:
                    await self.reader.readline()
                    return b"".join(out)
                out.append(await self.reader.readexactly(size))
                await self.reader.readexactly(2)
        return await self.reader.read()

    async def request(self, method: str, path: str, headers: dict[str, str], body: bytes | None,
                      timeout: float) -> tuple[int, dict[str, str], bytes]:
        try:
            async with asyncio.timeout(timeout):
                await self.send(method, path, headers, body)
                status, hdrs = await self.read_head()
                content = await self.read_body(hdrs, status)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, IndexError,
                TimeoutError) as exc:
            self.close()
            raise HttpFailure(f"{type(exc).__name__}: {exc}") from exc
        if hdrs.get("connection", "").lower() == "close":
            self.close()
        return status, hdrs, content


class Client:
    """Keep-alive connections to one server, reused LIFO; one in flight per connection; at most `max_conns` at
    once when given (a browser opens 6 per server and queues the rest: the wait counts in the latency)."""

    def __init__(self, host: str, port: int, max_conns: int | None = None):
        self.host, self.port = host, port
        self.idle: list[Conn] = []
        self.slots = asyncio.Semaphore(max_conns) if max_conns else None

    async def request(self, method: str, path: str, *, token: str | None = None, body: Any = None,
                      timeout: float = REQUEST_TIMEOUT_S) -> tuple[int, dict[str, str], bytes]:
        if self.slots is None:
            return await self._request(method, path, token, body, timeout)
        async with self.slots:
            return await self._request(method, path, token, body, timeout)

    async def _request(self, method: str, path: str, token: str | None, body: Any,
                       timeout: float) -> tuple[int, dict[str, str], bytes]:
        conn = self.idle.pop() if self.idle else Conn(self.host, self.port)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        data = json.dumps(body, separators=(",", ":")).encode() if body is not None else None
        fresh = conn.writer is None
        try:
            answer = await conn.request(method, path, headers, data, timeout)
        except HttpFailure as exc:
            if fresh or "Timeout" in str(exc):
                raise
            conn = Conn(self.host, self.port)  # the server closed an idle keep-alive connection: once more
            answer = await conn.request(method, path, headers, data, timeout)
        if conn.writer is not None:
            self.idle.append(conn)
        return answer

    def close(self) -> None:
        for c in self.idle:
            c.close()
        self.idle.clear()


# --- figures --------------------------------------------------------------------------------------------------

def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q / 100 * (len(s) - 1)))))]


def ms(v: float | None) -> float | None:
    return None if v is None else round(v * 1000, 1)


@dataclass
class Figures:
    measuring: bool = False
    batch_ack: list[float] = field(default_factory=list)
    lease: list[float] = field(default_factory=list)
    heartbeat: list[float] = field(default_factory=list)
    reads: list[float] = field(default_factory=list)
    stream: list[float] = field(default_factory=list)
    samples_acked: int = 0  # inserted, as the acknowledgements said, while measuring
    errors: Counter = field(default_factory=Counter)  # "kind status" -> count, over the whole run
    reads_skipped: int = 0  # offered reads not sent because 2,000 were already in flight
    streams_open: int = 0
    streams_refused: Counter = field(default_factory=Counter)
    slowest: float = 0.0  # the slowest answer to any request (not long polls or streams)

    def note(self, kind: str, status: int | str, took: float | None = None) -> None:
        if took is not None:
            self.slowest = max(self.slowest, took)
        if not (isinstance(status, int) and 200 <= status < 300):
            self.errors[f"{kind} {status}"] += 1


def retry_after(hdrs: dict[str, str], default: float) -> float:
    try:
        return max(default, float(hdrs.get("retry-after", "")))
    except ValueError:
        return default


# --- simulated runners ------------------------------------------------------------------------------------------

INVENTORY = {
    "cpu": {"model": "Simulated CPU @ 3.0GHz", "vendor": "sim", "sockets": 1, "cores_per_socket": 2,
            "threads_per_core": 1, "base_ghz": 3.0, "flags": ["avx2", "fma"], "isa": "x86_64"},
    "memory": {"total_bytes": 8 * 2**30},
    "os": {"system": "Linux", "release": "6.1", "machine": "x86_64"},
    "kernel": {"built": True},
}


@dataclass
class RunState:
    run_id: int
    attempt: int
    seq: int = -1
    spool: list[dict] = field(default_factory=list)  # generated, not yet acknowledged, in seq order
    acked: set[int] = field(default_factory=set)
    inserted: int = 0
    started: float = 0.0
    lost: bool = False
    lease_task: "asyncio.Task[None] | None" = None


class SimRunner:
    def __init__(self, load: "Load", index: int):
        self.load = load
        self.index = index
        self.name = f"load-{index:05d}"
        self.token = ""
        self.host_id = 0
        self.run: RunState | None = None
        self.client = Client(load.host, load.port)  # heartbeat, lease and uploads (the runner's own pool)
        self.poll_conn = Conn(load.host, load.port)  # the long poll's connection
        self.stop = asyncio.Event()
        self.tasks: list[asyncio.Task] = []

    async def register(self, admin_token: str) -> None:
        c = self.client
        for _ in range(20):
            st, hdrs, body = await c.request("POST", "/api/hosts/registration-tokens", token=admin_token,
                                             body={"ttl_s": 3600})
            if st == 201:
                reg = json.loads(body)["token"]
                st, hdrs, body = await c.request("POST", "/api/runners/register", body={
                    "registration_token": reg, "name": self.name, "hostname": f"{self.name}.load",
                    "version": VERSION, "inventory": INVENTORY, "labels": {"fleet": "load"}})
                if st == 201:
                    answer = json.loads(body)
                    self.token, self.host_id = answer["runner_token"], answer["host_id"]
                    return
            await asyncio.sleep(retry_after(hdrs, 0.5))
        raise RuntimeError(f"could not register {self.name}: HTTP {st} {body[:200]!r}")

    def start(self) -> None:
        self.tasks = [asyncio.create_task(self.heartbeat_loop()), asyncio.create_task(self.poll_loop())]

    async def call(self, kind: str, method: str, path: str, body: Any = None,
                   timeout: float = REQUEST_TIMEOUT_S) -> tuple[int | str, dict[str, str], bytes, float]:
        t0 = time.monotonic()
        try:
            st, hdrs, content = await self.client.request(method, path, token=self.token, body=body, timeout=timeout)
        except HttpFailure as exc:
            took = time.monotonic() - t0
            self.load.fig.note(kind, "timeout" if "Timeout" in str(exc) else "no answer", took)
            return "failure", {}, b"", took
        took = time.monotonic() - t0
        self.load.fig.note(kind, st, took)
        return st, hdrs, content, took

    async def heartbeat_loop(self) -> None:
        await asyncio.sleep(random.uniform(0, HEARTBEAT_S))  # noqa: S311
        while not self.stop.is_set():
            run = self.run
            body = {"run": {"run_id": run.run_id, "attempt": run.attempt} if run else None, "version": VERSION}
            st, _, content, took = await self.call("heartbeat", "POST", "/api/runner/heartbeat", body)
            wait = HEARTBEAT_S
            if st == 200:
                if self.load.fig.measuring:
                    self.load.fig.heartbeat.append(took)
                wait = float(json.loads(content).get("heartbeat_s") or HEARTBEAT_S)  # as the runner honours it
            try:
                await asyncio.wait_for(self.stop.wait(), wait)
            except TimeoutError:
                pass

    async def poll_loop(self) -> None:
        backoff = 0.5
        while not self.stop.is_set():
            if self.run is not None:
                await asyncio.sleep(0.5)
                continue
            try:
                st, hdrs, body = await self.poll_conn.request(
                    "GET", f"/api/runner/work?wait_s={POLL_WAIT_S}", {"Authorization": f"Bearer {self.token}"},
                    None, POLL_WAIT_S + REQUEST_TIMEOUT_S)
            except HttpFailure as exc:
                if self.stop.is_set():
                    break  # the poll in flight was cut by the stop itself, not by the server
                self.load.fig.note("work-poll", "timeout" if "Timeout" in str(exc) else "no answer")
                await asyncio.sleep(backoff)
                backoff = min(10.0, backoff * 2)
                continue
            self.load.fig.note("work-poll", st)
            if st == 200:
                backoff = 0.5
                a = json.loads(body)
                await self.execute(a)
            elif st == 204:
                backoff = 0.5
            else:
                await asyncio.sleep(retry_after(hdrs, backoff))
                backoff = min(10.0, backoff * 2)

    async def execute(self, a: dict) -> None:
        run = RunState(a["run_id"], a["attempt"], started=time.time())
        self.run = run
        self.load.runs[run.run_id] = run
        kinfo = {"clock_ghz": 3.0, "threads": 1, "build": "sim"}
        while not self.stop.is_set():
            st, hdrs, _, _ = await self.call("start", "POST", f"/api/runner/runs/{run.run_id}/start",
                                             {"attempt": run.attempt, "kernel_info": kinfo})
            if st == 200:
                break
            if st == 409 or (isinstance(st, int) and 400 <= st < 500 and st != 429):
                run.lost = True
                self.run = None
                return
            await asyncio.sleep(retry_after(hdrs, 1.0))
        self.load.running.add(self)
        run.lease_task = asyncio.create_task(self.lease_loop(run))
        self.tasks += [run.lease_task, asyncio.create_task(self.sample_loop(run)),
                       asyncio.create_task(self.upload_loop(run))]

    async def lease_loop(self, run: RunState) -> None:
        await asyncio.sleep(random.uniform(0, LEASE_RENEW_S))  # noqa: S311
        while not self.stop.is_set() and not run.lost:
            st, _, _, took = await self.call("lease", "POST", f"/api/runner/runs/{run.run_id}/lease",
                                             {"attempt": run.attempt}, timeout=5.0)
            if st == 200 and self.load.fig.measuring:
                self.load.fig.lease.append(took)
            if st == 409:
                run.lost = True
            try:
                await asyncio.wait_for(self.stop.wait(), LEASE_RENEW_S)
            except TimeoutError:
                pass

    async def sample_loop(self, run: RunState) -> None:
        """The kernel: one cpu_trace sample every 1/rate s, with the fields the real kernel writes."""
        period = 1.0 / self.load.rate
        next_at = time.monotonic()
        while not self.load.stop_samples.is_set() and not run.lost:
            # looked up per sample: the streams (and so the watched runs) are chosen after the runs start
            watched = run.run_id in self.load.watched
            now = time.monotonic()
            due = int((now - next_at) / period) + 1  # catch up if the event loop was late
            for _ in range(due):
                run.seq += 1
                wall = time.time()
                run.spool.append({"seq": run.seq, "t": round(wall - run.started, 6), "interval_s": period,
                                  "threads": 1, "repeat": 0, "warmup": run.seq < 3,
                                  "value": round(random.gauss(48.0, 0.4), 4), "unit": "GFLOP/s",  # noqa: S311
                                  "op": "fp64"})
                if watched:
                    self.load.measured[(run.run_id, run.seq)] = wall
            next_at += due * period
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))

    async def upload_loop(self, run: RunState) -> None:
        """The uploader: every --upload-interval, the spool's oldest samples (at most 1,000) in one batch; kept
        until acknowledged (spool-and-retry)."""
        delay = 0.5
        while not run.lost:
            if not run.spool:
                if self.load.stop_samples.is_set():
                    return
                await asyncio.sleep(self.load.upload_interval)
                continue
            batch = run.spool[:BATCH_MAX]
            st, hdrs, body, took = await self.call("samples", "POST", f"/api/runner/runs/{run.run_id}/samples",
                                                   {"attempt": run.attempt, "samples": batch})
            if st == 200:
                ack = json.loads(body)
                del run.spool[:len(batch)]
                run.acked.update(s["seq"] for s in batch)
                run.inserted += ack["inserted"]
                if self.load.fig.measuring:
                    self.load.fig.batch_ack.append(took)
                    self.load.fig.samples_acked += ack["inserted"]
                delay = 0.5
                if len(run.spool) < BATCH_MAX:
                    await asyncio.sleep(self.load.upload_interval)
            elif st == 409:
                run.lost = True
                self.load.lost_runs.append((run.run_id, body[:200].decode(errors="replace")))
            elif isinstance(st, int) and 400 <= st < 500 and st != 429:
                self.load.rejected.append((run.run_id, st, body[:200].decode(errors="replace")))
                del run.spool[:len(batch)]  # the runner drops a rejected batch and marks the run
            else:
                await asyncio.sleep(retry_after(hdrs, delay * random.uniform(0.5, 1.0)))  # noqa: S311
                delay = min(10.0, delay * 2)

    async def finish(self) -> None:
        run = self.run
        if run is None or run.lost:
            return
        if run.lease_task is not None:  # as the runner does: no renewal once the run is being finished
            run.lease_task.cancel()
            await asyncio.gather(run.lease_task, return_exceptions=True)
        for _ in range(10):
            st, hdrs, _, _ = await self.call("finish", "POST", f"/api/runner/runs/{run.run_id}/finish",
                                             {"attempt": run.attempt, "status": "failed",
                                              "reason": "load test ended"})
            if st == 200 or st == 409:
                return
            await asyncio.sleep(retry_after(hdrs, 1.0))

    async def shutdown(self) -> None:
        self.stop.set()
        self.poll_conn.close()
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        self.client.close()


# --- browsers -------------------------------------------------------------------------------------------------

async def stream_loop(load: "Load", run_id: int, token: str) -> None:
    """One browser tab's EventSource: reconnects after `retry` (1 s) with Last-Event-ID, like the browser; a
    refused open (an HTTP error: the browser gives up on it) is retried after a backoff of 1 s doubling to 15 s,
    or the Retry-After if longer, as the dashboard does (frontend/src/config/live.ts)."""
    fig = load.fig
    last = -1
    backoff = STREAM_RETRY_MIN_S
    while not load.stop_streams.is_set():
        conn = Conn(load.host, load.port)
        opened = time.time()
        headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
        if last >= 0:
            headers["Last-Event-ID"] = str(last)
        try:
            async with asyncio.timeout(15):
                await conn.send("GET", f"/api/runs/{run_id}/events", headers, None)
                st, hdrs = await conn.read_head()
            if st != 200:
                await asyncio.wait_for(conn.read_body(hdrs, st), 5)  # read (and drop) the refusal's body
                fig.note("stream-open", st)
                fig.streams_refused[st] += 1
                conn.close()
                await asyncio.sleep(max(backoff, retry_after(hdrs, 1.0)))
                backoff = min(STREAM_RETRY_MAX_S, backoff * 2)
                continue
            backoff = STREAM_RETRY_MIN_S
            fig.streams_open += 1
            try:
                buf = b""
                assert conn.reader is not None
                while not load.stop_streams.is_set():
                    line = await conn.reader.readline()
                    if not line.strip():
                        break  # the server closed the stream
                    size = int(line.split(b";")[0].strip(), 16)
                    if size == 0:
                        break
                    buf += await conn.reader.readexactly(size)
                    await conn.reader.readexactly(2)
                    while b"\n\n" in buf:
                        event, buf = buf.split(b"\n\n", 1)
                        kind = data = None
                        for line in event.split(b"\n"):
                            if line.startswith(b"event: "):
                                kind = line[7:]
                            elif line.startswith(b"data: "):
                                data = line[6:]
                        if kind == b"sample" and data is not None:
                            seq = json.loads(data)["seq"]
                            last = max(last, seq)
                            measured = load.measured.get((run_id, seq))
                            if measured is not None and measured > opened and fig.measuring:
                                fig.stream.append(time.time() - measured)
                        elif kind == b"end":
                            return
            finally:
                fig.streams_open -= 1
        except (OSError, asyncio.IncompleteReadError, ValueError, TimeoutError, asyncio.LimitOverrunError) as exc:
            fig.note("stream", type(exc).__name__)
        finally:
            conn.close()
        await asyncio.sleep(1.0)


READS = [  # (weight, path template): what the dashboard's pages ask for
    (30, "/api/hosts/{host}"),
    (20, "/api/runs?limit=50"),
    (20, "/api/runs/{run}"),
    (15, "/api/runs/{run}/samples?after_seq={after}&limit=100"),
    (10, "/api/runs?host_id={host}&limit=20"),
    (4, "/api/health"),
    (1, "/api/hosts"),
]


async def reads_loop(load: "Load", tokens: list[str]) -> None:
    fig = load.fig
    # each viewer is a browser: its own keep-alive connections, 6 at most, the rest of its reads queued
    clients = {t: Client(load.host, load.port, max_conns=BROWSER_CONNS) for t in tokens}
    inflight: set[asyncio.Task] = set()
    paths = [p for w, p in READS for _ in range(w)]
    period = 1.0 / load.reads_per_s
    next_at = time.monotonic()

    async def one(path: str, token: str) -> None:
        t0 = time.monotonic()
        try:
            st, _, _ = await clients[token].request("GET", path, token=token)
        except HttpFailure as exc:
            fig.note("read", "timeout" if "Timeout" in str(exc) else "no answer", time.monotonic() - t0)
            return
        took = time.monotonic() - t0
        fig.note("read", st, took)
        if 200 <= st < 300 and fig.measuring:
            fig.reads.append(took)

    while not load.stop_streams.is_set():
        now = time.monotonic()
        while next_at <= now:
            next_at += period
            if len(inflight) >= 2000:
                fig.reads_skipped += 1
                continue
            runs = list(load.runs) or [1]
            run = random.choice(runs)  # noqa: S311
            path = random.choice(paths).format(  # noqa: S311
                host=random.choice(load.host_ids) if load.host_ids else 1,  # noqa: S311
                run=run, after=max(-1, load.runs[run].seq - 100) if run in load.runs else -1)
            t = asyncio.create_task(one(path, random.choice(tokens)))  # noqa: S311
            inflight.add(t)
            t.add_done_callback(inflight.discard)
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))
    await asyncio.gather(*inflight, return_exceptions=True)
    for c in clients.values():
        c.close()


async def burst(load: "Load", k: int, token: str) -> dict:
    """K simultaneous GET /api/hosts/1, each on a connection of its own, opened beforehand."""
    conns = [Conn(load.host, load.port) for _ in range(k)]
    await asyncio.gather(*(asyncio.wait_for(c.open(), 30) for c in conns), return_exceptions=True)
    statuses: Counter = Counter()
    took: list[float] = []
    lease_before = len(load.fig.lease)

    async def one(c: Conn) -> None:
        t0 = time.monotonic()
        try:
            st, _, _ = await c.request("GET", "/api/hosts/1", {"Authorization": f"Bearer {token}"}, None, 60)
            statuses[st] += 1
        except HttpFailure as exc:
            statuses["timeout" if "Timeout" in str(exc) else "no answer"] += 1
        took.append(time.monotonic() - t0)
        c.close()

    t0 = time.monotonic()
    await asyncio.gather(*(one(c) for c in conns))
    wall = time.monotonic() - t0
    lease = load.fig.lease[lease_before:]
    return {"k": k, "statuses": {str(s): n for s, n in sorted(statuses.items(), key=str)},
            "max_ms": ms(max(took)), "p50_ms": ms(pct(took, 50)), "wall_ms": ms(wall),
            "lease_during_max_ms": ms(max(lease)) if lease else None}


# --- the stack's processes --------------------------------------------------------------------------------------

def _procs(pid: int) -> list:
    import psutil

    try:
        p = psutil.Process(pid)
        return [p, *p.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def cpu_s(procs: list) -> float:
    """CPU seconds of a process tree (the root first): the live processes' own, plus what the root's children
    that already exited used (PostgreSQL's backends come and go with connections; the postmaster reaps them)."""
    total = 0.0
    for i, p in enumerate(procs):
        try:
            t = p.cpu_times()
            total += t.user + t.system + (t.children_user + t.children_system if i == 0 else 0.0)
        except Exception:  # noqa: BLE001, S112 - a worker that exited
            continue
    return total


def rss_mib(procs: list) -> float:
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except Exception:  # noqa: BLE001, S112
            continue
    return total / 2**20


class Meter:
    """CPU seconds of a group of processes between mark() and read()."""

    def __init__(self, procs_fn):
        self.procs_fn = procs_fn
        self.t0 = self.c0 = 0.0

    def mark(self) -> None:
        self.t0, self.c0 = time.monotonic(), cpu_s(self.procs_fn())

    def cores(self) -> float:
        return round((cpu_s(self.procs_fn()) - self.c0) / max(1e-6, time.monotonic() - self.t0), 2)


# --- the whole run ------------------------------------------------------------------------------------------

class Load:
    def __init__(self, args: argparse.Namespace, url: str):
        from urllib.parse import urlsplit

        u = urlsplit(url)
        self.host, self.port = u.hostname or "127.0.0.1", u.port or 80
        self.args = args
        self.rate = args.rate
        self.upload_interval = args.upload_interval
        self.reads_per_s = args.reads
        self.fig = Figures()
        self.runs: dict[int, RunState] = {}
        self.running: set[SimRunner] = set()
        self.watched: set[int] = set()
        self.measured: dict[tuple[int, int], float] = {}
        self.host_ids: list[int] = []
        self.stop_samples = asyncio.Event()
        self.stop_streams = asyncio.Event()
        self.lost_runs: list[tuple[int, str]] = []
        self.rejected: list[tuple[int, int, str]] = []


def say(msg: str) -> None:
    print(f"[load {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


_VIEWERS = """
import sys
from app.core.db import get_sessionmaker
from app.users import service as users
with get_sessionmaker()() as session:
    for i in range(int(sys.argv[1])):
        user = users.create_user(session, f"load-viewer-{i}", "viewer", None)
        session.commit()
        print(users.create_api_token(session, user, "load", None)[0])
        session.commit()
"""


def make_viewers(stack: Any, n: int) -> list[str]:
    """n viewer users (the people with dashboards open), an API token each, in one backend process."""
    import subprocess

    from hostbench_cli import ROOT

    r = subprocess.run([sys.executable, "-c", _VIEWERS, str(n)], cwd=ROOT / "backend", env=stack.env(),
                       capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"creating the viewer users failed: {r.stderr[-2000:]}")
    return r.stdout.split()


async def drive(args: argparse.Namespace, stack: Any) -> dict:
    load = Load(args, stack.url)
    admin = stack.admin_headers()["Authorization"][7:]
    # the people: enough for the streams (--streams-per-user each) and for the reads (20 a second each at most)
    viewers = make_viewers(stack, max(1, -(-args.streams // args.streams_per_user), -(-int(args.reads) // 20)))
    api = Meter(lambda: _procs(stack.children["api"].proc.pid))
    pg = Meter(lambda: _procs(stack.pg.proc.pid) if stack.pg and stack.pg.proc else [])
    me = Meter(lambda: _procs(os.getpid())[:1])
    report: dict[str, Any] = {"runners": args.runners, "running": args.running, "streams": args.streams,
                              "reads_per_s_offered": args.reads, "rate_per_run": args.rate,
                              "seconds": args.seconds, "api_workers": args.api_workers}

    # 1. registration, then the idle fleet
    say(f"registering {args.runners} runners")
    runners = [SimRunner(load, i) for i in range(args.runners)]
    sem = asyncio.Semaphore(16)

    async def reg(r: SimRunner) -> None:
        async with sem:
            await r.register(admin)

    t0 = time.monotonic()
    await asyncio.gather(*(reg(r) for r in runners))
    report["register_s"] = round(time.monotonic() - t0, 1)
    load.host_ids = [r.host_id for r in runners]
    say(f"registered in {report['register_s']} s; starting their heartbeats and long polls")
    for i, r in enumerate(runners):
        r.start()
        if i % 50 == 49:
            await asyncio.sleep(0.05)
    await asyncio.sleep(HEARTBEAT_S + 1)  # every runner has polled and beaten once
    if args.idle_seconds > 0:
        api.mark()
        pg.mark()
        await asyncio.sleep(args.idle_seconds)
        report["idle_api_cores"] = api.cores()
        report["idle_pg_cores"] = pg.cores()
        say(f"idle fleet: API {report['idle_api_cores']} cores, PostgreSQL {report['idle_pg_cores']} cores")

    # 2. runs: cpu_trace jobs of up to 16 hosts each, as an operator would create them
    chosen = runners[:args.running]
    for i in range(0, len(chosen), 16):
        ids = [r.host_id for r in chosen[i:i + 16]]
        for _ in range(30):
            st, hdrs, body = await Client(load.host, load.port).request(
                "POST", "/api/jobs", token=admin, body={"experiment": "cpu_trace", "host_ids": ids,
                                                        "params": {"duration_s": 3600, "threads": 1}})
            if st == 201:
                break
            if st not in (429, 503):
                raise RuntimeError(f"could not create a job: HTTP {st} {body[:300]!r}")
            await asyncio.sleep(min(5.0, retry_after(hdrs, 1.0)))
        else:
            raise RuntimeError(f"could not create a job: HTTP {st} {body[:300]!r}")
    deadline = time.monotonic() + 60
    while len(load.running) < len(chosen) and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
    say(f"{len(load.running)} of {len(chosen)} runs started")
    report["runs_started"] = len(load.running)

    # 3. browsers: live streams spread over the runs, dashboard reads
    run_ids = sorted(load.runs)
    stream_tasks = []
    if run_ids:
        for i in range(args.streams):
            run_id = run_ids[i % len(run_ids)]
            load.watched.add(run_id)
            stream_tasks.append(asyncio.create_task(stream_loop(load, run_id, viewers[i // args.streams_per_user])))
    reads_task = asyncio.create_task(reads_loop(load, viewers)) if args.reads > 0 else None
    await asyncio.sleep(3)  # streams open, backlogs read

    # 4. measure
    say(f"measuring for {args.seconds} s")
    load.fig.measuring = True
    api.mark()
    pg.mark()
    me.mark()
    t0 = time.monotonic()
    bursts = []
    if args.burst and args.seconds > 0:
        await asyncio.sleep(min(args.seconds / 2, 10))
        for k in args.burst:
            say(f"burst of {k} simultaneous GET /api/hosts/1")
            bursts.append(await burst(load, k, viewers[0]))
            await asyncio.sleep(2)
    await asyncio.sleep(max(0.0, args.seconds - (time.monotonic() - t0)))
    elapsed = time.monotonic() - t0
    load.fig.measuring = False
    rss = rss_mib(_procs(stack.children["api"].proc.pid))
    report["api_cores"] = api.cores()
    report["pg_cores"] = pg.cores()
    report["load_generator_cores"] = me.cores()
    report["api_rss_mib"] = round(rss, 1)
    report["loadavg_1m_after"] = round(os.getloadavg()[0], 2)
    if args.burst and args.seconds <= 0:
        for k in args.burst:
            say(f"burst of {k} simultaneous GET /api/hosts/1")
            bursts.append(await burst(load, k, viewers[0]))
    f = load.fig
    report.update({
        "samples_per_s_stored": round(f.samples_acked / elapsed, 1),
        "batch_ack_p50_ms": ms(pct(f.batch_ack, 50)), "batch_ack_p99_ms": ms(pct(f.batch_ack, 99)),
        "batches": len(f.batch_ack),
        "stream_p50_ms": ms(pct(f.stream, 50)), "stream_p95_ms": ms(pct(f.stream, 95)),
        "stream_p99_ms": ms(pct(f.stream, 99)), "stream_samples": len(f.stream),
        "streams_open_at_end": f.streams_open, "streams_refused": dict(f.streams_refused),
        "lease_p99_ms": ms(pct(f.lease, 99)), "lease_max_ms": ms(max(f.lease) if f.lease else None),
        "lease_renewals": len(f.lease),
        "heartbeat_p99_ms": ms(pct(f.heartbeat, 99)),
        "reads_per_s_answered": round(len(f.reads) / elapsed, 1), "read_p95_ms": ms(pct(f.reads, 95)),
        "reads_skipped": f.reads_skipped, "slowest_answer_ms": ms(f.slowest),
        "bursts": bursts,
    })

    # 5. stop, drain, finish, check
    say("stopping samples, draining the spools")
    load.stop_samples.set()
    load.stop_streams.set()
    drain_deadline = time.monotonic() + 120
    while any(r.spool and not r.lost for r in load.runs.values()) and time.monotonic() < drain_deadline:
        await asyncio.sleep(0.5)
    unsent = sum(len(r.spool) for r in load.runs.values() if not r.lost)
    await asyncio.gather(*(r.finish() for r in chosen), return_exceptions=True)
    for t in stream_tasks:
        t.cancel()
    if reads_task is not None:
        reads_task.cancel()
    await asyncio.gather(*stream_tasks, *( [reads_task] if reads_task else []), return_exceptions=True)
    await asyncio.gather(*(r.shutdown() for r in runners), return_exceptions=True)
    report["errors"] = dict(sorted(f.errors.items()))
    report["runs_lost"] = len(load.lost_runs)
    report["batches_rejected"] = len(load.rejected)
    report["unsent_after_drain"] = unsent
    report.update(check_stored(stack.database_url, load.runs))
    return report


def check_stored(database_url: str, runs: dict[int, RunState]) -> dict:
    """Stored samples per (run, attempt) against the acknowledged ones: the same seqs, nothing more or less."""
    import psycopg

    dsn = database_url.replace("postgresql+psycopg://", "postgresql://")
    mismatched = []
    stored_total = acked_total = 0
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("select run_id, attempt, count(*), count(distinct seq) from samples "
                            "group by run_id, attempt").fetchall()
    stored = {(r, a): (n, d) for r, a, n, d in rows}
    for run in runs.values():
        n, d = stored.get((run.run_id, run.attempt), (0, 0))
        stored_total += n
        acked_total += len(run.acked)
        if n != len(run.acked) or d != n:
            mismatched.append({"run_id": run.run_id, "stored": n, "acknowledged": len(run.acked)})
    return {"stored_samples": stored_total, "acknowledged_samples": acked_total, "stored_equals_acknowledged":
            not mismatched and stored_total == acked_total, "mismatched_runs": mismatched[:10]}


def print_report(r: dict) -> None:
    rows = [
        ("runners online / running", f"{r['runners']} / {r.get('runs_started')}"),
        ("API cores, idle fleet only", r.get("idle_api_cores")),
        ("PostgreSQL cores, idle fleet only", r.get("idle_pg_cores")),
        ("samples/s stored", r.get("samples_per_s_stored")),
        ("batch ack p50 / p99 ms", f"{r.get('batch_ack_p50_ms')} / {r.get('batch_ack_p99_ms')}"),
        ("measurement→stream p50/p95/p99 ms",
         f"{r.get('stream_p50_ms')} / {r.get('stream_p95_ms')} / {r.get('stream_p99_ms')}"),
        ("streams open at end / refused", f"{r.get('streams_open_at_end')} / {r.get('streams_refused')}"),
        ("lease renewal p99 / max ms", f"{r.get('lease_p99_ms')} / {r.get('lease_max_ms')}"),
        ("heartbeat p99 ms", r.get("heartbeat_p99_ms")),
        ("dashboard reads/s answered, p95 ms", f"{r.get('reads_per_s_answered')}, {r.get('read_p95_ms')}"),
        ("slowest answer ms", r.get("slowest_answer_ms")),
        ("errors", r.get("errors")),
        ("API cores / RSS MiB", f"{r.get('api_cores')} / {r.get('api_rss_mib')}"),
        ("PostgreSQL cores / load generator cores", f"{r.get('pg_cores')} / {r.get('load_generator_cores')}"),
        ("stored = acknowledged",
         f"{r.get('stored_equals_acknowledged')} ({r.get('stored_samples')} / {r.get('acknowledged_samples')})"),
    ]
    for b in r.get("bursts", []):
        rows.append((f"burst {b['k']}: statuses, max ms", f"{b['statuses']}, {b['max_ms']}"))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    print(json.dumps(r, separators=(",", ":")), flush=True)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="./hostbench load")
    add_arguments(p)
    return p.parse_args(argv)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runners", type=int, default=1000, help="simulated runners online (default 1000)")
    p.add_argument("--running", type=int, default=200, help="of which have a run going (default 200)")
    p.add_argument("--rate", type=float, default=1.0, help="samples per second per run (default 1)")
    p.add_argument("--upload-interval", type=float, default=0.2,
                   help="seconds between a runner's batches while its spool is short (default 0.2, the runner's)")
    p.add_argument("--streams", type=int, default=500, help="live streams (SSE) open (default 500)")
    p.add_argument("--streams-per-user", type=int, default=10, help="streams per viewer user (default 10)")
    p.add_argument("--reads", type=float, default=1000, help="dashboard reads offered per second (default 1000)")
    p.add_argument("--seconds", type=float, default=60, help="measured seconds (default 60)")
    p.add_argument("--idle-seconds", type=float, default=10,
                   help="seconds the API's CPU is measured with the idle fleet only (default 10)")
    p.add_argument("--burst", type=lambda s: [int(x) for x in s.split(",") if x], default=[],
                   help="bursts of K simultaneous GET /api/hosts/1 during the measured time, e.g. 100,1000")
    p.add_argument("--api-workers", type=int, default=None,
                   help="API processes (uvicorn workers on the one port; default 1)")


def run(args: argparse.Namespace) -> int:
    from hostbench_cli.stack import Stack

    if args.running > args.runners:
        print("error: --running cannot exceed --runners", file=sys.stderr)
        return 2
    STATE.mkdir(exist_ok=True)
    state = Path(tempfile.mkdtemp(prefix="load-", dir=STATE))
    # the server's active-run caps (50 in all, 20 per person by default) would refuse the simulated fleet's runs
    cap = str(max(50, args.running + 16))
    extra = {"MAX_ACTIVE_JOBS": cap, "MAX_ACTIVE_RUNS_PER_USER": cap}
    stack = Stack(state, with_runner=False, durable=False, database="hostbench_load", fresh_database=True,
                  extra_env=extra, api_workers=args.api_workers)
    before = round(os.getloadavg()[0], 2)
    say(f"starting the stack in {state} (machine load {before:.2f})")
    ok = False
    try:
        stack.start()
        report = asyncio.run(drive(args, stack))
        report["loadavg_1m_before"] = before
        ok = bool(report["stored_equals_acknowledged"])
        print_report(report)
    finally:
        stack.stop()
        if ok:
            shutil.rmtree(state, ignore_errors=True)
        else:
            say(f"logs kept in {state / 'logs'}")
    if not ok:
        print("error: stored samples differ from acknowledged samples", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(run(parse()))
