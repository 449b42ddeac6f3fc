"""sockperf ping-pong / under-load output (client side).

Metrics in µs: `latency_avg`, `latency_p50`, `latency_p99`, and also `latency_p90`, `latency_p999`,
`latency_min`, `latency_max`.

The half-RTT trap: by default sockperf reports *one-way* latency, which it computes as the measured
round-trip time divided by two ("avg-latency", "Summary: Latency is ..."). With --full-rtt it prints
the round trip itself ("avg-rtt", "Summary: Round trip is ..."). Every metric carries `half_rtt`:
true for the default (value = RTT/2; double it to compare with ping), false for --full-rtt. We never
convert: the figure is what sockperf printed, the key says what it is.

Refused: sockperf's own error ("ERROR: ...", "No messages were received from the server"); a
throughput-mode report (it has no latency); a missing average, median, 99th percentile or the closing
<MIN> observation line (truncated output); percentiles that are not ordered.
"""

from __future__ import annotations

import re

from ._common import Metric, ParseError, metric, not_this_tool, to_float, to_int

_AVG = re.compile(r"====> avg-(latency|lat|rtt)\s*=\s*([\d.]+)\s*\(std-dev=\s*([\d.]+)[,)]")
_PCT = re.compile(r"---> percentile\s+([\d.]+)\s*=\s*([\d.]+)\s*$")
_MAXMIN = re.compile(r"---> <(MAX|MIN)> observation\s*=\s*([\d.]+)\s*$")
_SERVER = re.compile(r"Printing statistics for Server No:\s*(\d+)")
_DROPPED = re.compile(r"# dropped messages = (\d+); # duplicated messages = (\d+); # out-of-order messages = (\d+)")
_VALID = re.compile(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=(\d+); ReceivedMessages=(\d+)")


def parse(text: str) -> tuple[str, list[Metric]]:
    if not re.search(r"^sockperf[:\[]", text, re.M):
        raise not_this_tool("sockperf", text, "no 'sockperf:' lines")
    err = re.search(r"^sockperf: (?:ERROR|FATAL)\b.*$|No messages were received from the server.*$", text, re.M)
    if err:
        raise ParseError(f"sockperf reported an error: {err.group(0).strip()!r}")
    if re.search(r"Summary: Message Rate is|Summary: BandWidth is", text) and not _AVG.search(text):
        raise ParseError("a sockperf throughput-mode report: it has no latency figures")
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if _SERVER.search(line)] or [0]
    metrics: list[Metric] = []
    for k, start in enumerate(starts):
        stop = starts[k + 1] if k + 1 < len(starts) else len(lines)
        server = _SERVER.search(lines[start])
        metrics.extend(_block(lines[start:stop], int(server.group(1)) if server and len(starts) > 1 else None))
    return "text", metrics


def _block(lines: list[str], server: int | None) -> list[Metric]:
    text = "\n".join(lines)
    avg = _AVG.search(text)
    if avg is None:
        raise ParseError("no 'avg-latency=' (or 'avg-rtt=') line in the sockperf report (truncated output?)")
    half = avg.group(1) != "rtt"
    summary = re.search(r"Summary: (Latency|Round trip) is ([\d.]+) usec", text)
    if summary and (summary.group(1) == "Latency") != half:
        raise ParseError("sockperf's summary line and its avg line disagree on one-way vs round trip")
    pct: dict[float, float] = {}
    for line in lines:
        p = _PCT.search(line)
        if p:
            key = float(p.group(1))
            if key in pct:
                raise ParseError(f"sockperf percentile {p.group(1)} given twice")
            pct[key] = to_float(p.group(2), "sockperf percentile")
    extremes = {m.group(1): to_float(m.group(2), "sockperf observation")
                for line in lines if (m := _MAXMIN.search(line))}
    if 50.0 not in pct or 99.0 not in pct:
        raise ParseError("the sockperf report lacks its 50th or 99th percentile line (truncated output?)")
    if "MIN" not in extremes or "MAX" not in extremes:
        raise ParseError("the sockperf report lacks its <MAX>/<MIN> observation lines (truncated output?)")
    ordered = [extremes["MIN"]] + [pct[k] for k in sorted(pct)] + [extremes["MAX"]]
    if any(a > b for a, b in zip(ordered, ordered[1:])):
        raise ParseError(f"sockperf percentiles are not in order: {ordered}")
    keys: dict[str, object] = {"half_rtt": half, "server": server}
    dropped = _DROPPED.search(text)
    if dropped:
        keys.update(dropped=to_int(dropped.group(1), "dropped"), duplicated=to_int(dropped.group(2), "dup"),
                    out_of_order=to_int(dropped.group(3), "ooo"))
    valid = _VALID.search(text)
    if valid:
        keys["observations"] = to_int(valid.group(3), "received messages")
    mode = "full round trip (--full-rtt)" if not half else "one-way = round trip / 2 (sockperf default)"
    keys["measures"] = mode
    out = [metric("latency_avg", to_float(avg.group(2), "avg"), "µs", std_dev=to_float(avg.group(3), "std-dev"),
                  **keys)]
    for level, name in ((50.0, "latency_p50"), (99.0, "latency_p99"), (90.0, "latency_p90"), (99.9, "latency_p999")):
        if level in pct:
            out.append(metric(name, pct[level], "µs", **keys))
    out.append(metric("latency_min", extremes["MIN"], "µs", **keys))
    out.append(metric("latency_max", extremes["MAX"], "µs", **keys))
    return out
