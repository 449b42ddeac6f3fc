"""ping statistics: Linux iputils ("rtt min/avg/max/mdev"), BusyBox ("round-trip min/avg/max") and
macOS/BSD ("round-trip min/avg/max/stddev").

Metrics: `rtt_min`, `rtt_avg`, `rtt_max`, `rtt_mdev` in ms (round-trip times, as ping measures them;
iputils' "mdev" is the standard deviation, BSD calls it stddev, BusyBox prints none), and
`loss_percent`, with the transmitted/received counts as extra keys. When every packet was lost there is
no round trip to report: the result is `loss_percent` 100 alone, which is the measurement.

Refused: no statistics block (truncated or interrupted before ping printed its summary, or ping's own
error such as "Name or service not known"); more than one statistics block; figures that contradict
each other (min > avg > max, more received than sent, a loss percentage that does not follow from the
counts).
"""

from __future__ import annotations

import re

from ._common import Metric, ParseError, metric, not_this_tool, to_float, to_int

_COUNTS = re.compile(
    r"^(\d+) packets transmitted, (\d+) (?:packets )?received,(?: \+(\d+) duplicates,)?(?: \+(\d+) errors,)?"
    r" ([\d.]+)% packet loss"
)
_RTT = re.compile(
    r"^(?:rtt|round-trip) min/avg/max(/mdev|/stddev)? = ([\d.]+)/([\d.]+)/([\d.]+)(?:/([\d.]+))? ms(?:,.*)?$"
)


def parse(text: str) -> tuple[str, list[Metric]]:
    lines = [line.strip() for line in text.split("\n")]
    counts = [(i, m) for i, line in enumerate(lines) if (m := _COUNTS.match(line))]
    if not counts:
        err = re.search(r"^(?:ping|PING): .*$", text, re.M)
        if err:
            raise ParseError(f"ping reported an error: {err.group(0).strip()!r}")
        if re.search(r"^PING \S+|bytes from", text, re.M):
            raise ParseError("no '--- ping statistics ---' summary: the ping output is truncated or was interrupted")
        raise not_this_tool("ping", text, "no 'N packets transmitted, N received' line")
    if len(counts) > 1:
        raise ParseError(f"{len(counts)} ping statistics blocks in one file; give one run per file")
    i, m = counts[0]
    sent, recv = to_int(m.group(1), "transmitted"), to_int(m.group(2), "received")
    loss = to_float(m.group(5), "packet loss")
    if sent <= 0 or recv > sent:
        raise ParseError(f"ping counts are inconsistent: {sent} transmitted, {recv} received")
    expected = 100.0 * (sent - recv) / sent
    if abs(expected - loss) > 0.51:
        raise ParseError(f"ping says {loss}% loss but {recv} of {sent} packets came back ({expected:.1f}%)")
    keys = {"transmitted": sent, "received": recv}
    metrics = [metric("loss_percent", loss, "%", **keys)]
    rtt = None
    for line in lines[i + 1 : i + 4]:
        rtt = _RTT.match(line)
        if rtt:
            break
    if recv == 0:
        if rtt:
            raise ParseError("ping received no reply yet prints round-trip times (garbled output)")
        return "text", metrics
    if rtt is None:
        raise ParseError("no 'rtt min/avg/max/mdev' line after the ping counts (truncated output?)")
    mn, avg, mx = (to_float(rtt.group(k), "rtt") for k in (2, 3, 4))
    if not (mn <= avg <= mx):
        raise ParseError(f"ping round-trip times are inconsistent: min {mn}, avg {avg}, max {mx}")
    style = {"/mdev": "iputils", "/stddev": "bsd", None: "busybox"}[rtt.group(1)]
    metrics += [
        metric("rtt_min", mn, "ms", **keys),
        metric("rtt_avg", avg, "ms", **keys),
        metric("rtt_max", mx, "ms", **keys),
    ]
    if rtt.group(5) is not None:
        metrics.append(metric("rtt_mdev", to_float(rtt.group(5), "rtt mdev"), "ms", printed_as=rtt.group(1)[1:],
                              **keys))
    for x in metrics:
        x["format_variant"] = style
    return "text", metrics
