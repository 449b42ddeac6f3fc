"""Parsers for the reference tools' outputs: one module per tool, standard library only.

    from hostbench_common.reftools import parse_text, ParseError
    result = parse_text("fio", open("out.json").read())
    # {"tool": "fio", "format": "json", "metrics": [{"name": "bw", "value": 1355.893184, "unit": "MB/s", ...}]}

`./hostbench parse TOOL FILE` is the same thing on the command line (reftools/cli.py). A parser either
returns every figure of a complete, valid output or raises ParseError saying why it will not: a
truncated file, the tool's own error report, a failed self-check, garbled text. What each tool's
figures mean, and when we refuse, is in docs/methodology/reference-tools.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import fio, hpcc, hpl, iozone, iperf2, iperf3, ping, sockperf, stream
from ._common import Metric, ParseError, clean_text, looks_like_json, not_this_tool, require_content

Parser = Callable[[str], tuple[str, list[Metric]]]

PARSERS: dict[str, Parser] = {
    "stream": stream.parse,
    "hpl": hpl.parse,
    "hpcc": hpcc.parse,
    "fio": fio.parse,
    "iozone": iozone.parse,
    "iperf3": iperf3.parse,
    "iperf2": iperf2.parse,
    "ping": ping.parse,
    "sockperf": sockperf.parse,
}
TOOLS: tuple[str, ...] = tuple(PARSERS)
JSON_TOOLS = frozenset({"fio", "iperf3"})
MAX_CHARS = 64 * 1024 * 1024
MAX_LINE = 16 * 1024
MAX_UPLOAD_BYTES = 8 * 1024 * 1024  # the largest output POST /api/reference/parse takes
# No report has more lines (8 MiB of ping's 64-character lines is 130,000); a flood of blank lines is refused before
# any per-line work, which keeps the worst upload under a second of CPU (common/tests/reftools/adversarial.py).
MAX_LINES = 200_000

__all__ = ["JSON_TOOLS", "MAX_CHARS", "MAX_LINE", "MAX_LINES", "MAX_UPLOAD_BYTES", "PARSERS", "TOOLS", "Metric",
           "ParseError", "parse_text", "require_lines"]


def require_lines(text: str, tool: str) -> None:
    lines = text.count("\n") + 1
    if lines > MAX_LINES:
        raise ParseError(f"{lines} lines: more than any {tool} report ({MAX_LINES} at most)")


def parse_text(tool: str, raw: str) -> dict[str, Any]:
    """Parse one tool's output. Raises KeyError for an unknown tool, ParseError for an unreadable output."""
    if tool not in PARSERS:
        raise KeyError(tool)
    if len(raw) > MAX_CHARS:
        raise ParseError(f"{len(raw)} characters: larger than any {tool} report ({MAX_CHARS} at most)")
    text = clean_text(raw)
    require_content(text)
    if tool not in JSON_TOOLS and text.lstrip().startswith("{"):
        raise not_this_tool(tool, text, f"{tool} writes text, this is JSON")
    if not (tool in JSON_TOOLS and looks_like_json(text)):  # (JSON is decoded in C, not line by line)
        require_lines(text, tool)
        longest = max(len(line) for line in text.split("\n"))
        if longest > MAX_LINE:
            # no tool prints such a line; refusing it also keeps every line-based pattern linear-time
            raise ParseError(f"a line of {longest} characters: not a {tool} text report (lines are at most "
                             f"{MAX_LINE} characters)")
    try:
        fmt, metrics = PARSERS[tool](text)
    except (ValueError, ArithmeticError, RecursionError) as exc:  # a 5000-digit int(), deep JSON: garbled text
        raise ParseError(f"not a {tool} report: {str(exc)[:160]}") from None
    if not metrics:
        raise ParseError("no figure found")
    return {"tool": tool, "format": fmt, "metrics": metrics}
