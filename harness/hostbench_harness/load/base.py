"""The load generator's ground: the runner-like constants, a small HTTP/1.1 keep-alive client on asyncio streams
(not httpx: on 2 cores its per-request cost decides how much load one process can offer), and the figures."""
import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

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
    # how late this process's event loop ran a 50-ms timer, while measuring: every latency above was timed by
    # this loop, so each includes up to this much of the generator's own lateness (the bursts are not: they are
    # timed by a process of their own, hostbench_harness.load.burster)
    loop_lag: list[float] = field(default_factory=list)
    # GET /api/health every HEALTH_PROBE_S while measuring, bursts included, as an orchestrator's probe: (status or
    # "timeout"/"no answer", seconds), and each answer that was not 200, as `answer_why` says it, counted
    health: list[tuple[int | str, float]] = field(default_factory=list)
    health_not_200: Counter = field(default_factory=Counter)
    # the probes over 2 s: (seconds, where their time went: burster.timed_parts of their Server-Timing)
    health_slow: list[tuple[float, dict[str, float]]] = field(default_factory=list)

    def note(self, kind: str, status: int | str, took: float | None = None) -> None:
        if took is not None:
            self.slowest = max(self.slowest, took)
        if not (isinstance(status, int) and 200 <= status < 300):
            self.errors[f"{kind} {status}"] += 1


async def watch_loop_lag(fig: Figures, period_s: float = 0.05) -> None:
    loop = asyncio.get_running_loop()
    while True:
        t0 = loop.time()
        await asyncio.sleep(period_s)
        if fig.measuring:
            fig.loop_lag.append(max(0.0, loop.time() - t0 - period_s))


def answer_why(status: int, hdrs: dict[str, str], body: bytes) -> str:
    """A refusal in a few words, to be counted: its status, what X-Hostbench-Unavailable names (the part that is
    down), and the body's `detail` (the reason: "the server is busy; retry shortly", "the database is not
    answering ..."), figures kept."""
    why = str(status)
    if hdrs.get("x-hostbench-unavailable"):
        why += f" unavailable={hdrs['x-hostbench-unavailable']}"
    try:
        detail = json.loads(body).get("detail")
    except (ValueError, AttributeError):
        detail = None
    text = str(detail) if detail is not None else body[:80].decode("latin-1", "replace")
    return f"{why}: {text[:120]}" if text else why


def retry_after(hdrs: dict[str, str], default: float) -> float:
    try:
        return max(default, float(hdrs.get("retry-after", "")))
    except ValueError:
        return default


# --- where an answer's time went (the API's Server-Timing, HOSTBENCH_SERVER_TIMING) ----------------------------

def server_timing(value: str) -> dict[str, float]:
    """`lag;dur=1.0, cache;dur=2.5, ..., t0;desc="123.4"` (the API's Server-Timing, HOSTBENCH_SERVER_TIMING) as
    seconds by name: a duration (ms) in seconds, a `desc` (a time on the monotonic clock) as it is."""
    out = {}
    for part in value.split(","):
        name, _, rest = part.strip().partition(";")
        for param in rest.split(";"):
            k, _, v = param.strip().partition("=")
            try:
                if k == "dur":
                    out[name] = float(v) / 1000
                elif k == "desc":
                    out[name] = float(v.strip('"'))
            except ValueError:
                pass
    return out


def timed_parts(value: str, sent: float, took: float) -> dict[str, float]:
    """An answer's Server-Timing, with `before` (from `sent`, this machine's time.monotonic, until the application
    saw the request) and `after` (from its answer's start until `sent + took`): the server's clock is this one."""
    parts = server_timing(value)
    if "t0" in parts and "t1" in parts:
        parts["before"], parts["after"] = parts.pop("t0") - sent, sent + took - parts.pop("t1")
    return parts


SLOW_S = 5.0  # the burst's bound (issue 11)


def where(timed: list[tuple[float, dict[str, float]]]) -> dict:
    """Where the answers' time went, as the server said (Server-Timing) and as this process saw it: for all the
    answers that said, and for those over SLOW_S, each part's mean and max in ms. `before`: from this process's
    sending until the application saw the request (the server's event loop reading and parsing it behind the
    others; this process's own sending of the K requests); the server's parts (lag, cache, gate, app, total); `after`:
    from the answer's start to its arrival here (the server writing it out, this process reading it)."""
    def summary(rows: list[tuple[float, dict[str, float]]]) -> dict:
        out: dict = {"n": len(rows)}
        if not rows:
            return out
        for name in ("before", "lag", "cache", "gate", "app", "total", "after"):
            vals = [parts.get(name, 0.0) for _, parts in rows if name not in ("before", "after") or name in parts]
            if vals:
                out[name] = {"mean_ms": round(1000 * sum(vals) / len(vals), 1), "max_ms": round(1000 * max(vals), 1)}
        return out

    return {"all": summary(timed), "over_5s": summary([r for r in timed if r[0] > SLOW_S])}
