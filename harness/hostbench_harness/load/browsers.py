"""Browser-like clients: live streams (SSE) with the dashboard's reconnect backoff, dashboard reads at an offered
rate, and bursts of simultaneous requests."""
import asyncio
import json
import os
import random
import sys
import time
from typing import TYPE_CHECKING

from hostbench_harness.load.base import (
    BROWSER_CONNS,
    STREAM_RETRY_MAX_S,
    STREAM_RETRY_MIN_S,
    Client,
    Conn,
    HttpFailure,
    answer_why,
    ms,
    pct,
    retry_after,
    timed_parts,
)

if TYPE_CHECKING:
    from hostbench_harness.load import Load

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
        kind = "read /api/health" if path == "/api/health" else "read"  # its refusals apart: issue 31
        try:
            st, _, _ = await clients[token].request("GET", path, token=token)
        except HttpFailure as exc:
            fig.note(kind, "timeout" if "Timeout" in str(exc) else "no answer", time.monotonic() - t0)
            return
        took = time.monotonic() - t0
        fig.note(kind, st, took)
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


HEALTH_PROBE_S = 0.5


async def health_probe(load: "Load") -> None:
    """An orchestrator's liveness probe: GET /api/health on a connection of its own every HEALTH_PROBE_S while
    measuring (bursts included), each given 10 s; timed by this process's loop (its lag is reported apart). Each
    answer that is not 200 is counted by what it said (answer_why: status, X-Hostbench-Unavailable, detail)."""
    client = Client(load.host, load.port, max_conns=1)
    try:
        while True:
            t0 = time.monotonic()
            hdrs: dict[str, str] = {}
            try:
                st, hdrs, body = await client.request("GET", "/api/health", timeout=10)
                status: int | str = st
                why = None if st == 200 else answer_why(st, hdrs, body)
            except HttpFailure as exc:
                status = why = "timeout" if "Timeout" in str(exc) else "no answer"
            took = time.monotonic() - t0
            if load.fig.measuring:
                load.fig.health.append((status, took))
                if why is not None:
                    load.fig.health_not_200[why] += 1
                if took > 2.0 and "server-timing" in hdrs:  # where a slow one's time went (burster.where)
                    load.fig.health_slow.append((took, timed_parts(hdrs["server-timing"], t0, took)))
            await asyncio.sleep(max(0.0, HEALTH_PROBE_S - (time.monotonic() - t0)))
    finally:
        client.close()


BURST_PATH = "/api/hosts/1"  # what a burst asks for: one dashboard read that touches PostgreSQL


async def burst(load: "Load", k: int, token: str) -> dict:
    """K simultaneous GET BURST_PATH, each on a connection of its own opened beforehand, sent and timed by a
    process of their own (hostbench_harness.load.burster): this process's event loop, busy with the fleet, would add
    its own lateness to every answer."""
    env = {**os.environ, "HOSTBENCH_BURST_TOKEN": token}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hostbench_harness.load.burster", load.host, str(load.port), str(k), BURST_PATH,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        ready = await asyncio.wait_for(proc.stdout.readline(), 60)
        if ready.strip() != b"ready":
            raise RuntimeError(f"the burst process did not start: {ready[:200]!r}")
        lease_before = len(load.fig.lease)
        proc.stdin.write(b"go\n")
        await proc.stdin.drain()
        line = await asyncio.wait_for(proc.stdout.readline(), 120)
        await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    out = json.loads(line)
    took = out["took_s"]
    lease = load.fig.lease[lease_before:]
    return {"k": k, "statuses": out["statuses"], "max_ms": ms(max(took)), "p50_ms": ms(pct(took, 50)),
            "p99_ms": ms(pct(took, 99)), "wall_ms": ms(out["wall_s"]), "not_opened": out["not_opened"],
            "over_5s": sum(1 for t in took if t > 5.0),
            "lease_during_max_ms": ms(max(lease)) if lease else None, "where": out.get("where")}
