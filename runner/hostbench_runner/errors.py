"""The runner's one error hierarchy."""

from __future__ import annotations

from hostbench_common.errors import ParamError

__all__ = ["ConfigError", "KernelUnavailable", "ParamError", "ProtocolError", "Rejected", "Retryable", "RunnerError",
           "Stale", "Unauthorized"]


class RunnerError(Exception):
    """Base of every error the runner raises on purpose."""


class ConfigError(RunnerError):
    """Bad or missing settings; the daemon exits 2."""


class Unauthorized(RunnerError):
    """The server answered 401: credential missing, unknown or revoked. The daemon exits 3."""


class Stale(RunnerError):
    """The server answered 409: this (run, attempt) is no longer wanted."""


class Rejected(RunnerError):
    """The server refused the request with a 4xx other than 401/409/429; never retried."""

    def __init__(self, status: int, detail: str):
        super().__init__(f"HTTP {status}: {detail}")
        self.status = status
        self.detail = detail


class Retryable(RunnerError):
    """5xx, 429 or a network error: retry later with backoff. `unavailable` names the part the server said was
    down when it answered (its X-Hostbench-Unavailable header: "database"), None when it did not answer."""

    def __init__(self, message: str, retry_after: float | None = None, unavailable: str | None = None):
        super().__init__(message)
        self.retry_after = retry_after
        self.unavailable = unavailable




class ProtocolError(RunnerError):
    """The kernel printed something that is not protocol version 1."""


class KernelUnavailable(RunnerError):
    """The kernel binary is missing or its --describe failed."""
