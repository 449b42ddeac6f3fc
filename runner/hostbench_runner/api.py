"""The runner's one HTTP client and its one retry policy (docs/reliability.md, rule 6).

Every answer is classified once, in `classify`: 2xx ok; 5xx, 429 and network errors are
retried with capped, jittered exponential backoff; 401 means the credential is gone; 409 means
the (run, attempt) is stale; any other 4xx is final and never retried.

The client is the standard library's `http.client` (the runner depends on nothing else, so it installs on
hosts with no internet): one small pool of keep-alive connections shared by the runner's threads, a connect
timeout and a read timeout per request. A pooled connection the server closed meanwhile is noticed before
reuse (it reads as ready) and dropped; one that breaks as the request goes out is replaced once, silently.
"""

from __future__ import annotations

import enum
import http.client
import json as jsonlib
import logging
import random
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlencode, urlsplit

from . import __version__
from .errors import Rejected, Retryable, Stale, Unauthorized

log = logging.getLogger("hostbench.api")

T = TypeVar("T")
MAX_IDLE = 8  # keep-alive connections kept for reuse; the runner has at most ~5 concurrent callers


class Disposition(enum.Enum):
    OK = "ok"
    RETRY = "retry"
    UNAUTHORIZED = "unauthorized"
    STALE = "stale"
    REJECT = "reject"


def classify(status: int | None) -> Disposition:
    """status None stands for a network error (no answer at all)."""
    if status is None:
        return Disposition.RETRY
    if 200 <= status < 300:
        return Disposition.OK
    if status == 401:
        return Disposition.UNAUTHORIZED
    if status == 409:
        return Disposition.STALE
    if status == 429 or status >= 500:
        return Disposition.RETRY
    return Disposition.REJECT


class Backoff:
    """Capped exponential backoff with "equal jitter": a delay in [d/2, d], d = min(cap, base·2^n)."""

    def __init__(self, base: float = 0.5, cap: float = 10.0, rng: random.Random | None = None):
        self.base, self.cap = base, cap
        self.failures = 0
        self._rng = rng or random.Random()  # noqa: S311 - jitter, not cryptography

    def next_delay(self, retry_after: float | None = None) -> float:
        d = min(self.cap, self.base * (2 ** min(self.failures, 30)))
        self.failures += 1
        delay = d / 2 + self._rng.uniform(0, d / 2)
        if retry_after is not None:
            delay = max(delay, min(self.cap, retry_after))
        return delay

    def reset(self) -> None:
        self.failures = 0


class Response:
    """One answer, read whole: status, headers (case-insensitive) and body."""

    def __init__(self, status: int, headers: http.client.HTTPMessage, content: bytes):
        self.status_code, self.headers, self.content = status, headers, content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return jsonlib.loads(self.content)


def _detail(resp: Response) -> str:
    try:
        body = resp.json()
        detail = body.get("detail", body) if isinstance(body, dict) else body
        text = detail if isinstance(detail, str) else repr(detail)
    except ValueError:
        text = resp.text
    return text[:500]


# The header a server's 503 names the part that is down with (backend app/core/errors.py): "database" means the
# server itself answered, so it cannot have handed this runner's run to anyone else meanwhile.
UNAVAILABLE_HEADER = "x-hostbench-unavailable"


def _retry_after(resp: Response) -> float | None:
    value = resp.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class _Timeouts:
    """Connect within `connect_s`, then each read within `read_s` (as httpx's Timeout(read_s, connect=...))."""

    def __init__(self, read_s: float, connect_s: float):
        self.read_s, self.connect_s = read_s, connect_s


def _closed_by_peer(conn: http.client.HTTPConnection) -> bool:
    """An idle keep-alive socket that reads as ready has been closed (or answered out of turn): not reusable."""
    sock = conn.sock
    if sock is None:
        return True
    try:
        ready, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(ready)


# A request that fails this way on a reused keep-alive connection never reached the application: the server
# had closed the connection. It is sent again once on a new connection.
_STALE_CONNECTION = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


class ApiClient:
    """Runner-facing endpoints of docs/api.md. Methods return the decoded JSON (or None for 204)
    and raise Unauthorized / Stale / Rejected / Retryable as classified above.

    Safe to share between threads: each request takes a connection from the pool (or opens one) and puts it
    back when the answer has been read whole."""

    def __init__(self, base_url: str, token: str | None = None, timeout_s: float = 10.0,
                 ssl_context: ssl.SSLContext | None = None):
        url = urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"server must be an http(s) URL, got {base_url!r}")
        self._https = url.scheme == "https"
        self._host = url.hostname
        self._port = url.port or (443 if self._https else 80)
        self._prefix = url.path.rstrip("/")
        self._host_header = url.netloc.rpartition("@")[2]
        self._ssl = ssl_context if ssl_context is not None else (ssl.create_default_context() if self._https else None)
        self._timeout_s = timeout_s
        self._default = _Timeouts(timeout_s, min(timeout_s, 5.0))
        self._headers = {"User-Agent": f"hostbench-runner/{__version__}", "Accept": "application/json"}
        self._lock = threading.Lock()
        self._idle: list[http.client.HTTPConnection] = []
        self._closed = False
        if token:
            self.set_token(token)

    def set_token(self, token: str) -> None:
        with self._lock:
            self._headers = {**self._headers, "Authorization": f"Bearer {token}"}

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
            self._closed = True
        for conn in idle:
            conn.close()

    # --- connections -----------------------------------------------------------------------

    def _new_connection(self, connect_s: float) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(self._host, self._port, timeout=connect_s, context=self._ssl)
        return http.client.HTTPConnection(self._host, self._port, timeout=connect_s)

    def _take(self) -> http.client.HTTPConnection | None:
        with self._lock:
            while self._idle:
                conn = self._idle.pop()
                if not _closed_by_peer(conn):
                    return conn
                conn.close()
        return None

    def _give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < MAX_IDLE:
                self._idle.append(conn)
                return
        conn.close()

    def _exchange(self, conn: http.client.HTTPConnection, method: str, target: str, body: bytes | None,
                  headers: dict[str, str], timeouts: _Timeouts) -> Response:
        if conn.sock is None:
            conn.timeout = timeouts.connect_s
            conn.connect()
        assert conn.sock is not None
        conn.sock.settimeout(timeouts.read_s)
        conn.request(method, target, body=body, headers=headers)
        resp = conn.getresponse()
        content = resp.read()
        answer = Response(resp.status, resp.headers, content)
        if resp.will_close:
            conn.close()
        else:
            self._give_back(conn)
        return answer

    def _send(self, method: str, target: str, body: bytes | None, headers: dict[str, str],
              timeouts: _Timeouts) -> Response:
        conn = self._take()
        if conn is not None:
            try:
                return self._exchange(conn, method, target, body, headers, timeouts)
            except _STALE_CONNECTION:
                conn.close()  # the server closed it while idle: once more on a new connection
            except BaseException:
                conn.close()
                raise
        conn = self._new_connection(timeouts.connect_s)
        try:
            return self._exchange(conn, method, target, body, headers, timeouts)
        except BaseException:
            conn.close()
            raise

    # --- requests --------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        json: Any = None,
        params: dict[str, Any] | None = None,
        timeout_s: float | None = None,
    ) -> Any:
        target = self._prefix + path + (f"?{urlencode(params)}" if params else "")
        with self._lock:
            headers = {"Host": self._host_header, **self._headers}
            sent_with = self._headers.get("Authorization")
        body = None
        if json is not None:
            body = jsonlib.dumps(json, separators=(",", ":")).encode()
            headers["Content-Type"] = "application/json"
        elif method in ("POST", "PUT", "PATCH"):
            headers["Content-Length"] = "0"
        timeouts = self._default if timeout_s is None else _Timeouts(timeout_s, min(timeout_s, 5.0))
        try:
            resp = self._send(method, target, body, headers, timeouts)
        except (OSError, http.client.HTTPException) as exc:  # refused, reset, timeout, TLS, bad answer
            what = "timeout" if isinstance(exc, socket.timeout) else type(exc).__name__
            raise Retryable(f"{method} {path}: {what}: {exc}") from exc
        disposition = classify(resp.status_code)
        if disposition is Disposition.OK:
            if resp.status_code == 204 or not resp.content:
                return None
            try:
                return resp.json()
            except ValueError as exc:
                raise Retryable(f"{method} {path}: answer is not JSON") from exc
        if disposition is Disposition.RETRY:
            raise Retryable(
                f"{method} {path}: HTTP {resp.status_code}: {_detail(resp)}", _retry_after(resp),
                resp.headers.get(UNAVAILABLE_HEADER),
            )
        if disposition is Disposition.UNAUTHORIZED:
            with self._lock:
                superseded = sent_with != self._headers.get("Authorization")
            if superseded:  # sent with the credential a rotation replaced meanwhile: again, with the new one
                raise Retryable(f"{method} {path}: HTTP 401 for the credential just rotated out; retrying")
            raise Unauthorized(f"{method} {path}: HTTP 401: {_detail(resp)}")
        if disposition is Disposition.STALE:
            raise Stale(f"{method} {path}: HTTP 409: {_detail(resp)}")
        raise Rejected(resp.status_code, _detail(resp))

    # --- endpoints -------------------------------------------------------------------------

    def register(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", "/api/runners/register", json=body)

    def heartbeat(self, body: dict[str, Any]) -> Any:
        return self.request("POST", "/api/runner/heartbeat", json=body)

    def rotate_credential(self) -> dict[str, Any]:
        return self.request("POST", "/api/runner/credential/rotate")

    def get_work(self, wait_s: int) -> dict[str, Any] | None:
        return self.request(
            "GET", "/api/runner/work", params={"wait_s": wait_s}, timeout_s=wait_s + self._timeout_s
        )

    def start(self, run_id: Any, body: dict[str, Any]) -> Any:
        return self.request("POST", f"/api/runner/runs/{run_id}/start", json=body)

    def lease(self, run_id: Any, attempt: int, timeout_s: float | None = None,
              phase: dict[str, Any] | None = None) -> Any:
        """Renew the run's lease; `phase`, when given, is what the runner is doing now (the run page shows it)."""
        body: dict[str, Any] = {"attempt": attempt, **({"phase": phase} if phase is not None else {})}
        return self.request("POST", f"/api/runner/runs/{run_id}/lease", json=body, timeout_s=timeout_s)

    def listening(self, run_id: Any, attempt: int, port: int, reference_ports: dict[str, int] | None = None) -> Any:
        body: dict[str, Any] = {"attempt": attempt, "port": port}
        if reference_ports is not None:
            body["reference_ports"] = reference_ports
        return self.request("POST", f"/api/runner/runs/{run_id}/listening", json=body)

    def samples(self, run_id: Any, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", f"/api/runner/runs/{run_id}/samples", json=body)

    def finish(self, run_id: Any, body: dict[str, Any]) -> Any:
        return self.request("POST", f"/api/runner/runs/{run_id}/finish", json=body)

    def closed(self, run_id: Any, attempt: int) -> Any:
        """No finish comes for this attempt (the server ended the run), and every sample it spooled is delivered."""
        return self.request("POST", f"/api/runner/runs/{run_id}/closed", json={"attempt": attempt})


def call_with_retry(
    fn: Callable[[], T],
    backoff: Backoff,
    stop: threading.Event,
    what: str,
    give_up_after_s: float | None = None,
) -> T:
    """Call fn until it stops raising Retryable; re-raises when `stop` is set or time is up.
    Unauthorized / Stale / Rejected pass straight through: they are never retried."""
    started = time.monotonic()
    while True:
        try:
            result = fn()
            backoff.reset()
            return result
        except Retryable as exc:
            delay = backoff.next_delay(exc.retry_after)
            if give_up_after_s is not None and time.monotonic() - started + delay > give_up_after_s:
                raise
            log.warning("%s failed, retry in %.1fs: %s", what, delay, exc)
            if stop.wait(delay):
                raise
