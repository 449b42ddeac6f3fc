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

__all__ = ["JSON_TOOLS", "MAX_CHARS", "MAX_LINE", "PARSERS", "TOOLS", "Metric", "ParseError", "parse_text"]


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
    if not (tool in JSON_TOOLS and looks_like_json(text)):
        longest = max(len(line) for line in text.split("\n"))
        if longest > MAX_LINE:
            # no tool prints such a line; refusing it also keeps every line-based pattern linear-time
            raise ParseError(f"a line of {longest} characters: not a {tool} text report (lines are at most "
                             f"{MAX_LINE} characters)")
    fmt, metrics = PARSERS[tool](text)
    if not metrics:
        raise ParseError("no figure found")
    return {"tool": tool, "format": fmt, "metrics": metrics}
