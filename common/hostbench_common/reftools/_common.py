"""Shared pieces of the reference-tool parsers: the error type, metric records, number and unit helpers.

Standard library only. Every parser raises ParseError with a message a person can act on rather
than returning a partial result: a figure we cannot read with certainty is no figure at all.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from typing import Any

Metric = dict[str, Any]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def zip_strict(a: Sequence[Any], b: Sequence[Any]) -> Iterator[tuple[Any, Any]]:
    """zip(a, b, strict=True) of Python 3.10+, for sequences: unequal lengths are a bug, never a silent cut."""
    if len(a) != len(b):
        raise ValueError(f"zip_strict: lengths differ ({len(a)} and {len(b)})")
    return zip(a, b)


class ParseError(Exception):
    """The file is not a complete, valid output of the tool; the message says why."""


def metric(name: str, value: float | int, unit: str, **extra: Any) -> Metric:
    """One figure. Refuses a non-finite value: NaN or infinity is never a measurement."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(f"{name}: value {value!r} is not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise ParseError(f"{name}: value {value!r} is not a finite number")
    out: Metric = {"name": name, "value": value, "unit": unit}
    for key, val in extra.items():
        if val is not None:
            out[key] = val
    return out


def clean_text(raw: str) -> str:
    """Normalise line ends and strip terminal colour codes (sockperf prints them)."""
    text = raw.replace("\r\n", "\n").replace("\r", "\n")
    return _ANSI.sub("", text)


def require_content(text: str) -> None:
    if not text.strip():
        raise ParseError("the file is empty")
    if "\x00" in text:
        raise ParseError("the file contains NUL bytes: not a text output")


def to_float(token: str, what: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise ParseError(f"{what}: {token!r} is not a number") from None
    if not math.isfinite(value):
        raise ParseError(f"{what}: {token!r} is not a finite number")
    return value


def to_int(token: str, what: str) -> int:
    try:
        return int(token)
    except ValueError:
        raise ParseError(f"{what}: {token!r} is not an integer") from None


def round_sig(value: float, digits: int = 12) -> float:
    """Strip binary noise from a unit conversion (2.8 * 1e9 -> 2800000000.0, not 2799999999.9999995)."""
    if value == 0 or not math.isfinite(value):
        return value
    return float(f"{value:.{digits}g}")


# Rates as iperf2/iperf3 print them: bit rates use decimal prefixes (1 Kbit = 1000 bit), byte rates binary
# ones (1 KByte = 1024 byte); both tools share this convention (units.c). Values are converted to bit/s.
_BIT_RATE = {"bits/sec": 1.0, "Kbits/sec": 1e3, "Mbits/sec": 1e6, "Gbits/sec": 1e9, "Tbits/sec": 1e12}
_BYTE_RATE = {
    "Bytes/sec": 8.0,
    "KBytes/sec": 8.0 * 1024,
    "MBytes/sec": 8.0 * 1024**2,
    "GBytes/sec": 8.0 * 1024**3,
    "TBytes/sec": 8.0 * 1024**4,
}
RATE_UNITS = "|".join(re.escape(u) for u in sorted({**_BIT_RATE, **_BYTE_RATE}, key=len, reverse=True))


def rate_to_bps(number: str, unit: str, what: str) -> float:
    value = to_float(number, what)
    if unit in _BIT_RATE:
        return round_sig(value * _BIT_RATE[unit])
    if unit in _BYTE_RATE:
        return round_sig(value * _BYTE_RATE[unit])
    raise ParseError(f"{what}: unknown rate unit {unit!r}")


def first_json_object(text: str, what: str) -> tuple[Any, str]:
    """Decode the JSON object that starts on the first line beginning with '{'.

    Returns (object, text before it). Tools print warnings or errors before their JSON (fio does);
    the caller decides what those mean. A JSON document that stops early is a truncated output.
    """
    match = re.search(r"^\{", text, re.M)
    if match is None:
        raise ParseError(f"no JSON object found in the {what} output")
    try:
        obj, _end = json.JSONDecoder().raw_decode(text, match.start())
    except json.JSONDecodeError as exc:
        raise ParseError(f"the {what} JSON is incomplete or corrupt (truncated output?): {exc.msg} "
                         f"at line {exc.lineno}") from None
    except (ValueError, RecursionError) as exc:  # an integer of more than 4300 digits, nesting deeper than the stack
        raise ParseError(f"the {what} JSON is not a tool's report: {str(exc)[:120]}") from None
    if not isinstance(obj, dict):
        raise ParseError(f"the {what} JSON is not an object")
    before = text[: match.start()]
    if any(len(line) > 16 * 1024 for line in before.split("\n")):
        raise ParseError(f"a text line of more than 16384 characters before the {what} JSON: not a tool message")
    return obj, before


def looks_like_json(text: str) -> bool:
    """True when the content is (or contains, after tool warnings) a JSON object starting a line."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return True
    return re.search(r"^\{\s*$|^\{\s*\"", text, re.M) is not None


# Signatures used only to say "this looks like X output" when a file is given to the wrong parser.
_SIGNATURES: list[tuple[str, re.Pattern[str]]] = [
    ("hpcc", re.compile(r"HPC Challenge Benchmark|Begin of Summary section")),
    ("fio", re.compile(r'"fio version"|^\S+: \(groupid=\d+, jobs=\d+\)|^fio-\d', re.M)),
    ("iperf3", re.compile(r'"system_info"|^iperf 3|^Connecting to host .*port|^iperf3: error|Server listening on \d+$',
                          re.M)),
    ("iperf2", re.compile(r"^Client connecting to .*(TCP|UDP) port|^Server listening on (TCP|UDP) port", re.M)),
    ("iozone", re.compile(r"Iozone: Performance Test of File I/O|iozone test complete")),
    ("stream", re.compile(r"STREAM version|Function\s+Best Rate MB/s")),
    ("hpl", re.compile(r"HPLinpack|Intel\(R\) Optimized LINPACK|Performance Summary \(GFlops\)")),
    ("ping", re.compile(r"^PING \S+|packets transmitted", re.M)),
    ("sockperf", re.compile(r"^sockperf[:\[]", re.M)),
]


SNIFF_CHARS = 64 * 1024  # a tool's markers are in its first lines; nine searches of 8 MiB would cost seconds


def sniff(text: str) -> str | None:
    head = text[:SNIFF_CHARS]
    for tool, pattern in _SIGNATURES:
        if pattern.search(head):
            return tool
    return None


def not_this_tool(tool: str, text: str, missing: str) -> ParseError:
    """The error for a file that lacks the tool's own markers, naming the tool it resembles if any."""
    guess = sniff(text)
    hint = f"; it looks like {guess} output" if guess and guess != tool else ""
    return ParseError(f"not {tool} output: {missing}{hint}")
