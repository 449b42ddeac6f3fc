"""The way back, declared once: the fields of a kernel's result line as the kernels declare them (`hbk <kernel>
--describe` "results", the describe snapshot), and the bounds of the fields the kernels' parameters bound.

The runner's check of a result line (hostbench_runner.protocol) and the API's runner-upload models
(backend app.runner_api.schemas) read their types and bounds from here; backend/tests/test_result_declared.py
fails when one of them writes a bound of its own.
"""
from __future__ import annotations

from typing import Any

from .describe import DESCRIBE

# The parameter that sets a kernel's worker threads: `threads`, or `streams` for net (its harness's threads_def).
_THREAD_PARAMS = ("threads", "streams")
# The parameters that bound how many measured phases a thread count gets (the result's `repeat`, 1-based).
_REPEAT_PARAMS = ("repeats", "max_repeats")


def _types() -> dict[str, str]:
    """Every result key any kernel declares → its JSON type; a key two kernels type differently is an error."""
    out: dict[str, str] = {}
    for kernel, d in DESCRIBE.items():
        for key, field in d.get("results", {}).items():
            if out.setdefault(key, field["type"]) != field["type"]:
                raise ValueError(f"result field {key!r}: {kernel} declares {field['type']}, another {out[key]}")
    return out


def _span(names: tuple[str, ...]) -> tuple[int, int]:
    """The widest [minimum, maximum] over every kernel's parameter among `names` (a list's items, or a number)."""
    lows: list[int] = []
    highs: list[int] = []
    for d in DESCRIBE.values():
        props: dict[str, Any] = d["parameters"]["properties"]
        for name in names:
            if name in props:
                schema = props[name].get("items", props[name])
                lows.append(int(schema["minimum"]))
                highs.append(int(schema["maximum"]))
    if not lows:
        raise ValueError(f"no kernel declares any of {names}")
    return min(lows), max(highs)


TYPES: dict[str, str] = _types()

# A result line's `threads` is one of the run's thread counts; its `repeat` is 1 .. the most phases a thread count
# may get. A sample line carries the same two, with repeat 0 for the warm-up phase.
THREADS: tuple[int, int] = _span(_THREAD_PARAMS)
REPEAT: tuple[int, int] = (1, _span(_REPEAT_PARAMS)[1])
SAMPLE_REPEAT: tuple[int, int] = (0, REPEAT[1])

# Result field → (minimum, maximum), for the fields a declaration bounds.
BOUNDS: dict[str, tuple[int, int]] = {"threads": THREADS, "repeat": REPEAT}
SAMPLE_BOUNDS: dict[str, tuple[int, int]] = {"threads": THREADS, "repeat": SAMPLE_REPEAT}

# The most result lines one run may give (thread counts x repeats, and ops x blocks where a kernel lists them): the
# runner's check of the stream refuses more (hostbench_runner.protocol), the API's finish takes as many
# (app.runner_api.schemas.RunFinish). A cap of ours, not the product of the parameters' maxima.
MAX_RESULT_LINES = 10_000
# List fields on the way back → the most items they may hold.
LENGTHS: dict[str, int] = {"results": MAX_RESULT_LINES}


def out_of_bounds(line: dict[str, Any], bounds: dict[str, tuple[int, int]]) -> str | None:
    """Why a line's bounded field lies outside its declared bounds, or None when none does."""
    for key, (low, high) in bounds.items():
        value = line.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and not low <= value <= high:
            return f"{key} {value} outside the kernels' declared {low}..{high}"
    return None
