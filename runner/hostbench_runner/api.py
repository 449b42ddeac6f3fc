"""The runner's one HTTP client and its one retry policy (RELIABILITY rule 6).

Every answer is classified once, in `classify`: 2xx ok; 5xx, 429 and network errors are
retried with capped, jittered exponential backoff; 401 means the credential is gone; 409 means
the (run, attempt) is stale; any other 4xx is final and never retried.
"""

from __future__ import annotations

import enum
import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import httpx

from . import __version__
from .errors import Rejected, Retryable, Stale, Unauthorized

log = logging.getLogger("hostbench.api")

T = TypeVar("T")


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


def _detail(resp: httpx.Response) -> str:
    try:
        body = resp.json()
        detail = body.get("detail", body) if isinstance(body, dict) else body
        text = detail if isinstance(detail, str) else repr(detail)
    except ValueError:
        text = resp.text
    return text[:500]


def _retry_after(resp: httpx.Response) -> float | None:
    value = resp.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class ApiClient:
    """Runner-facing endpoints of docs/api.md. Methods return the decoded JSON (or None for 204)
    and raise Unauthorized / Stale / Rejected / Retryable as classified above."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        timeout_s: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ):
        self._client = httpx.Client(
            base_url=base_url,
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 5.0)),
            headers={"User-Agent": f"hostbench-runner/{__version__}"},
            transport=transport,
        )
        self._timeout_s = timeout_s
        if token:
            self.set_token(token)

    def set_token(self, token: str) -> None:
        self._client.headers["Authorization"] = f"Bearer {token}"

    def close(self) -> None:
        self._client.close()

    def request(
        self,
        method: str,
        path: str,
        json: Any = None,
        params: dict[str, Any] | None = None,
        timeout_s: float | None = None,
    ) -> Any:
        try:
            resp = self._client.request(
                method,
                path,
                json=json,
                params=params,
                timeout=None if timeout_s is None else httpx.Timeout(timeout_s, connect=min(timeout_s, 5.0)),
            )
        except httpx.HTTPError as exc:  # connect/read errors, timeouts, protocol errors
            raise Retryable(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
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
                f"{method} {path}: HTTP {resp.status_code}: {_detail(resp)}", _retry_after(resp)
            )
        if disposition is Disposition.UNAUTHORIZED:
            raise Unauthorized(f"{method} {path}: HTTP 401: {_detail(resp)}")
        if disposition is Disposition.STALE:
            raise Stale(f"{method} {path}: HTTP 409: {_detail(resp)}")
        raise Rejected(resp.status_code, _detail(resp))

    # --- endpoints -------------------------------------------------------------------------

    def register(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", "/api/runners/register", json=body)

    def heartbeat(self, body: dict[str, Any]) -> Any:
        return self.request("POST", "/api/runner/heartbeat", json=body)

    def get_work(self, wait_s: int) -> dict[str, Any] | None:
        return self.request(
            "GET", "/api/runner/work", params={"wait_s": wait_s}, timeout_s=wait_s + self._timeout_s
        )

    def start(self, run_id: Any, body: dict[str, Any]) -> Any:
        return self.request("POST", f"/api/runner/runs/{run_id}/start", json=body)

    def lease(self, run_id: Any, attempt: int, timeout_s: float | None = None) -> Any:
        return self.request(
            "POST", f"/api/runner/runs/{run_id}/lease", json={"attempt": attempt}, timeout_s=timeout_s
        )

    def listening(self, run_id: Any, attempt: int, port: int, reference_ports: dict[str, int] | None = None) -> Any:
        body: dict[str, Any] = {"attempt": attempt, "port": port}
        if reference_ports is not None:
            body["reference_ports"] = reference_ports
        return self.request("POST", f"/api/runner/runs/{run_id}/listening", json=body)

    def samples(self, run_id: Any, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", f"/api/runner/runs/{run_id}/samples", json=body)

    def finish(self, run_id: Any, body: dict[str, Any]) -> Any:
        return self.request("POST", f"/api/runner/runs/{run_id}/finish", json=body)


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
