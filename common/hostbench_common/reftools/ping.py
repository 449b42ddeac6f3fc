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

import functools
import re

from ._common import Metric, ParseError, metric, not_this_tool, round_sig, to_float, to_int
from ._net import peer
from .plan import Context, Plan, as_list, op_of

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


# --- argv and the reference runs -------------------------------------------------------------------------

PING_COUNT = 20
PING_INTERVAL_S = "0.2"  # iputils' smallest interval for a user without CAP_NET_RAW (older releases)
PING_MIN = 16  # below a struct timeval of data, iputils prints no round-trip times
PING_MAX = 65507  # the largest ICMP echo payload over IPv4 (65535 - 20 - 8)
PING_TIMEOUT_S = 30.0


def _plans(ctx: Context, addr: str) -> list[Plan]:
    """`ping` per size of a *_rr run with one stream: 20 echoes 0.2 s apart, payload = our message size
    clamped to what ping can send (16..65507 B). An ICMP echo is answered by the peer's kernel: no socket,
    no process of ours on either side, so the figure is context for our row, not a like-for-like one."""
    op = op_of(ctx)
    if op not in ("tcp_rr", "udp_rr"):
        return []
    if 1 not in [int(s) for s in as_list(ctx.params.get("streams") or 1)]:
        return []
    out = []
    for size in as_list(ctx.params.get("sizes")):
        payload = min(max(int(size), PING_MIN), PING_MAX)
        out.append(Plan(
            tool="ping", argv=tuple(argv(addr, payload)), parser=functools.partial(parse_rr, payload_bytes=payload),
            primary="round_trips_per_s", matches={"op": op, "threads": 1, "block_bytes": size},
            timeout_s=PING_TIMEOUT_S, typical_s=PING_COUNT * float(PING_INTERVAL_S) + 0.5,
            what=f"ping, {payload} B",
        ))
    return out


def argv(addr: str, payload: int, count: int = PING_COUNT, interval_s: str = PING_INTERVAL_S) -> list[str]:
    """`count` echoes of `payload` bytes to addr, `interval_s` apart, numeric output."""
    return ["ping", "-n", "-c", str(count), "-i", interval_s, "-s", str(payload), addr]


def plans(ctx: Context) -> list[Plan]:
    return _plans(ctx, "127.0.0.1")


def peer_plans(ctx: Context) -> list[Plan]:
    if op_of(ctx) not in ("tcp_rr", "udp_rr"):
        return []
    return _plans(ctx, peer(ctx))


PING_MEASURES = "ping: ICMP echo round trip, kernel-to-kernel, no socket stack of ours"


def parse_rr(text: str, payload_bytes: int | None = None) -> list[Metric]:
    """reftools' ping metrics, led by `round_trips_per_s` = 1e6 / rtt_avg in µs (our *_rr rows are RT/s, so
    the ratio is computed on it) and `rtt_avg_us` (beside our rows' latency_avg_us). Every metric says what
    ping measures: the ratio is context, not a like-for-like comparison. A run with no reply is refused."""
    from . import parse_text  # the registry imports this module

    metrics = parse_text("ping", text)["metrics"]
    avg = next((m for m in metrics if m["name"] == "rtt_avg"), None)
    if avg is None:
        loss = next((m["value"] for m in metrics if m["name"] == "loss_percent"), None)
        raise ParseError(f"ping got no reply ({loss}% packet loss): no round trip to compare")
    if avg["value"] <= 0:
        raise ParseError(f"ping's average round trip {avg['value']} ms is not a measured figure")
    us = round_sig(avg["value"] * 1000)
    keys = {"measures": PING_MEASURES, "payload_bytes": payload_bytes}
    rate = metric("round_trips_per_s", round_sig(1e6 / us), "RT/s",
                  derived=f"1e6 / ping's rtt_avg in µs (rtt_avg ms x 1000); {PING_MEASURES}: context for our "
                          "round-trip row, not the same path", rtt_avg_us=us, **keys)
    avg_us = metric("rtt_avg_us", us, "µs", derived=f"ping's rtt_avg (ms) x 1000; {PING_MEASURES}", **keys)
    for m in metrics:
        m.setdefault("measures", PING_MEASURES)
    return [rate, avg_us, *metrics]
