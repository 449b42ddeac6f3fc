"""Kernel output protocol v1 (docs/kernel-protocol.md): parse and check the JSON-lines stream.

`parse_line` checks one line on its own; `Stream` checks the order of a whole run (start first,
contiguous sample seq, end last). Both raise ProtocolError with a message that names the line.
"""

from __future__ import annotations

import json
import math
from typing import Any

from hostbench_common import resultfields

from .errors import ProtocolError

VERSION = 1
MAX_LINE_BYTES = 64 * 1024
MAX_RESULTS = resultfields.MAX_RESULT_LINES

_NUM = "number"
_INT = "integer"
_STR = "string"
_BOOL = "boolean"
_OBJ = "object"

# Required fields per event type; extra fields are allowed (kernel-specific facts).
_REQUIRED: dict[str, dict[str, str]] = {
    "start": {"kernel": _STR, "params": _OBJ, "unit": _STR},
    "sample": {
        "seq": _INT, "t": _NUM, "interval_s": _NUM, "threads": _INT, "repeat": _INT,
        "warmup": _BOOL, "value": _NUM, "unit": _STR,
    },
    # A result line's fields are typed by the kernels' declaration (`--describe` "results": resultfields).
    "result": {k: resultfields.TYPES[k] for k in ("threads", "repeat", "value", "unit", "verified")},
    "end": {"status": _STR},
    "error": {"code": _STR, "message": _STR},
    # net --role serve only: the port it bound (right after start), and what it served (just before end).
    "listening": {"port": _INT, "proto": _STR, "bind": _STR, "t": _NUM},
    "served": {
        "sessions": _INT, "refused": _INT, "bytes_received": _INT, "checked_bytes": _INT,
        "verify_failures": _INT, "stopped": _STR, "t": _NUM,
    },
}
END_STATUSES = {"ok", "untrusted"}
ERROR_CODES = {"bad_param", "unsupported", "verify_failed", "internal"}

# The fields a sample carries to the server (docs/api.md `Sample`), then the optional ones.
SAMPLE_FIELDS = ("seq", "t", "interval_s", "threads", "repeat", "warmup", "value", "unit")
SAMPLE_OPTIONAL = {"op": _STR, "block_bytes": _INT}


def _is(value: Any, kind: str) -> bool:
    if kind == _INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == _NUM:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if kind == _STR:
        return isinstance(value, str)
    if kind == _BOOL:
        return isinstance(value, bool)
    return isinstance(value, dict)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_line(raw: bytes | str) -> dict[str, Any]:
    if isinstance(raw, bytes):
        if len(raw) > MAX_LINE_BYTES:
            raise ProtocolError(f"line longer than {MAX_LINE_BYTES} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError(f"line is not UTF-8: {exc}") from None
    else:
        text = raw
    text = text.strip()
    if not text:
        raise ProtocolError("empty line")
    try:
        event = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        raise ProtocolError(f"not JSON ({exc}): {text[:120]!r}") from None
    if not isinstance(event, dict):
        raise ProtocolError(f"not a JSON object: {text[:120]!r}")
    v = event.get("v")
    if not _is(v, _INT) or v != VERSION:
        raise ProtocolError(f"unsupported protocol version {v!r} (runner speaks v{VERSION})")
    kind = event.get("type")
    if kind not in _REQUIRED:
        raise ProtocolError(f"unknown event type {kind!r}")
    for name, want in _REQUIRED[kind].items():
        if name not in event:
            raise ProtocolError(f"{kind} event without {name!r}")
        if not _is(event[name], want):
            raise ProtocolError(f"{kind}.{name} must be {want}, got {event[name]!r}"[:200])
    if kind == "sample" and event["seq"] < 0:
        raise ProtocolError("sample.seq must be >= 0")
    if kind in ("sample", "result") and (why := resultfields.out_of_bounds(
            event, resultfields.SAMPLE_BOUNDS if kind == "sample" else resultfields.BOUNDS)):
        raise ProtocolError(f"{kind}.{why}")
    if kind == "listening" and not 1 <= event["port"] <= 65535:
        raise ProtocolError(f"listening.port {event['port']} is not a port (1..65535)")
    if kind == "served" and any(event[k] < 0 for k in _REQUIRED["served"] if _REQUIRED["served"][k] == _INT):
        raise ProtocolError("served counts must be >= 0")
    if kind == "end" and event["status"] not in END_STATUSES:
        raise ProtocolError(f"end.status {event['status']!r} is not ok/untrusted")
    return event


def sample_for_api(event: dict[str, Any]) -> dict[str, Any]:
    sample = {k: event[k] for k in SAMPLE_FIELDS}
    sample.update({k: event[k] for k, kind in SAMPLE_OPTIONAL.items() if k in event and _is(event[k], kind)})
    return sample


class Stream:
    """Order of one kernel process's events: [start] (sample|result)* (end|error), or error alone; a serving
    kernel: start listening served end (listening once, before served; served once, last before end)."""

    def __init__(self, max_samples: int | None = None):
        self.start: dict[str, Any] | None = None
        self.end: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.results: list[dict[str, Any]] = []
        self.listening: dict[str, Any] | None = None
        self.served: dict[str, Any] | None = None
        self.next_seq = 0
        self.lines = 0
        self.max_samples = max_samples

    @property
    def closed(self) -> bool:
        return self.end is not None or self.error is not None

    def feed(self, raw: bytes | str) -> dict[str, Any]:
        self.lines += 1
        try:
            event = parse_line(raw)
            self._order(event)
        except ProtocolError as exc:
            raise ProtocolError(f"line {self.lines}: {exc}") from None
        return event

    def _order(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if self.closed:
            raise ProtocolError(f"{kind} event after the last event")
        if kind == "error":
            self.error = event
            return
        if kind == "start":
            if self.start is not None:
                raise ProtocolError("second start event")
            self.start = event
            return
        if self.start is None:
            raise ProtocolError(f"{kind} event before start")
        if self.served is not None and kind != "end":
            raise ProtocolError(f"{kind} event after served (only end may follow)")
        if kind == "sample":
            if event["seq"] != self.next_seq:
                raise ProtocolError(f"sample seq {event['seq']} where {self.next_seq} was expected")
            if self.max_samples is not None and self.next_seq >= self.max_samples:
                raise ProtocolError(f"more than {self.max_samples} samples for this run")
            self.next_seq += 1
        elif kind == "result":
            if len(self.results) >= MAX_RESULTS:
                raise ProtocolError(f"more than {MAX_RESULTS} result events")
            self.results.append(event)
        elif kind == "listening":
            if self.listening is not None:
                raise ProtocolError("second listening event")
            if self.served is not None:
                raise ProtocolError("listening event after served")
            self.listening = event
        elif kind == "served":
            if self.served is not None:
                raise ProtocolError("second served event")
            self.served = event
        elif kind == "end":
            self.end = event
