"""The way back, declared once: the fields of a kernel's result line as the kernels declare them (`hbk <kernel>
--describe` "results", the describe snapshot): each field's JSON type and, for a number, its range (JSON Schema
minimum / exclusiveMinimum / maximum: a share 0..1, a count >= 0, threads within the thread parameter, repeat
within max_repeats), declared in the C table beside the field (runner/kernels/src/results.h, hb_result.range).

The runner's check of a result line (hostbench_runner.protocol) and the API's runner-upload models
(backend app.runner_api.schemas) read their types and ranges from here; backend/tests/test_result_declared.py
fails when one of them writes a bound of its own.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .describe import DESCRIBE


@dataclass(frozen=True)
class Range:
    """A number's declared range; None: no bound on that side. exclusive_minimum: the number lies above it."""

    minimum: float | None = None
    exclusive_minimum: float | None = None
    maximum: float | None = None

    @classmethod
    def of(cls, field: dict[str, Any]) -> Range:
        return cls(field.get("minimum"), field.get("exclusiveMinimum"), field.get("maximum"))

    def __bool__(self) -> bool:
        return self != Range()

    def holds(self, value: float) -> bool:
        return not ((self.minimum is not None and value < self.minimum)
                    or (self.exclusive_minimum is not None and value <= self.exclusive_minimum)
                    or (self.maximum is not None and value > self.maximum))

    def _low(self) -> tuple[float, bool] | None:
        """The lower bound as (value, exclusive): the smaller tuple is the looser bound."""
        if self.minimum is not None:
            return self.minimum, False
        return None if self.exclusive_minimum is None else (self.exclusive_minimum, True)

    def loosest(self, other: Range) -> Range:
        """The range that holds every value either holds (a field two kernels declare: the wider of the two)."""
        a, b = self._low(), other._low()
        low = min(a, b) if a is not None and b is not None else None
        high = None if self.maximum is None or other.maximum is None else max(self.maximum, other.maximum)
        if low is None:
            return Range(maximum=high)
        return Range(exclusive_minimum=low[0], maximum=high) if low[1] else Range(minimum=low[0], maximum=high)

    def __str__(self) -> str:
        """"0..1", ">= 0", "> 0", "1..256"."""
        if self.exclusive_minimum is not None:
            low = f"> {_num(self.exclusive_minimum)}"
        else:
            low = "" if self.minimum is None else _num(self.minimum)
        if self.maximum is not None:
            return f"{low}..{_num(self.maximum)}"
        return low if low.startswith(">") else f">= {low}" if low else "any"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _figures(d: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A kernel's declared result fields, an object's members as `key.member`."""
    out: dict[str, dict[str, Any]] = {}
    for key, field in d.get("results", {}).items():
        out[key] = field
        for member, sub in field.get("fields", {}).items():
            out[f"{key}.{member}"] = sub
    return out


def _types() -> dict[str, str]:
    """Every result key any kernel declares (an object's members as `key.member`) → its JSON type; a key two
    kernels type differently is an error."""
    out: dict[str, str] = {}
    for kernel, d in DESCRIBE.items():
        for key, field in _figures(d).items():
            if out.setdefault(key, field["type"]) != field["type"]:
                raise ValueError(f"result field {key!r}: {kernel} declares {field['type']}, another {out[key]}")
    return out


def _ranges() -> dict[str, Range]:
    """Every numeric result field (object members as `key.member`) a kernel declares a range for → the loosest
    over the kernels that declare it (threads: cpu 1..256, net 1..8 → 1..256); a field one kernel bounds and
    another does not is unbounded."""
    seen: dict[str, Range] = {}
    for d in DESCRIBE.values():
        for key, field in _figures(d).items():
            if field["type"] in ("number", "integer"):
                rng = Range.of(field)
                seen[key] = seen[key].loosest(rng) if key in seen else rng
    return {k: r for k, r in seen.items() if r}


def _int_span(rng: Range) -> tuple[int, int]:
    if rng.minimum is None or rng.maximum is None:
        raise ValueError(f"{rng} is not a closed range")
    return int(rng.minimum), int(rng.maximum)


TYPES: dict[str, str] = _types()

# Result field → its declared range, for the numeric fields the kernels bound (an object's members as
# `latency_us.p50`). What a kernel declares no range for (the measured value itself) has no entry.
BOUNDS: dict[str, Range] = _ranges()

# A result line's `threads` is one of the run's thread counts; its `repeat` is 1 .. the most phases a thread count
# may get. A sample line carries the same two, with repeat 0 for the warm-up phase.
THREADS: tuple[int, int] = _int_span(BOUNDS["threads"])
REPEAT: tuple[int, int] = _int_span(BOUNDS["repeat"])
SAMPLE_REPEAT: tuple[int, int] = (0, REPEAT[1])
SAMPLE_BOUNDS: dict[str, Range] = {"threads": BOUNDS["threads"],
                                   "repeat": Range(minimum=SAMPLE_REPEAT[0], maximum=SAMPLE_REPEAT[1])}

# The most result lines one run may give (thread counts x repeats, and ops x blocks where a kernel lists them): the
# runner's check of the stream refuses more (hostbench_runner.protocol), the API's finish takes as many
# (app.runner_api.schemas.RunFinish). A cap of ours, not the product of the parameters' maxima.
MAX_RESULT_LINES = 10_000
# List fields on the way back → the most items they may hold.
LENGTHS: dict[str, int] = {"results": MAX_RESULT_LINES}


def _number(value: Any) -> bool:  # not TypeGuard: the runner runs on Python 3.9 (runner/tests/test_py39.py)
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def out_of_bounds(line: dict[str, Any], bounds: dict[str, Range]) -> str | None:
    """Why a line's bounded field (an object's member: `key.member`) lies outside its declared range, or None when
    none does. null, a missing field and what is not a number are not this check's to refuse (the types are)."""
    for key, rng in bounds.items():
        head, _, member = key.partition(".")
        value = line.get(head)
        if member:
            value = value.get(member) if isinstance(value, dict) else None
        if _number(value) and not rng.holds(float(value)):  # type: ignore[arg-type]
            return f"{key} {value!r} outside the kernels' declared {rng}"
    return None
