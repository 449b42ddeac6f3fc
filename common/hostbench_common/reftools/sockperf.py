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
from collections.abc import Sequence

from ._common import Metric, ParseError, metric, not_this_tool, round_sig, to_float, to_int
from ._net import NET_MARGIN_S, NET_START_S, UDP_MAX, net_cpus, peer, peer_port, whole_s
from .plan import PORT, Context, Plan, as_list, op_of

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


# --- argv and the reference runs -------------------------------------------------------------------------

MIN_SIZE = 14  # sockperf's smallest message (its own header)


def _pinned(cpu: int | None) -> list[str]:
    return ["taskset", "-c", str(cpu)] if cpu is not None else []


def client_argv(host: str, port: str | int, size: int | str, duration_s: int, tcp: bool, busy: bool = False,
                cpu: int | None = None) -> list[str]:
    """sockperf ping-pong (pp) of `size`-byte messages for duration_s whole seconds, --full-rtt so the
    figures are whole round trips; TCP or sockperf's default UDP; --nonblocked spins on recv (busy);
    cpu: pinned there with taskset."""
    return [*_pinned(cpu), "sockperf", "pp", *(["--tcp"] if tcp else []), "-i", host, "-p", str(port),
            "-m", str(size), "-t", str(duration_s), "--full-rtt", *(["--nonblocked"] if busy else [])]


def server_argv(host: str, port: str | int, tcp: bool, busy: bool = False, cpu: int | None = None) -> list[str]:
    """sockperf's server (sr) on host:port, TCP or UDP, --nonblocked when busy; cpu: pinned with taskset."""
    return [*_pinned(cpu), "sockperf", "sr", *(["--tcp"] if tcp else []), "-i", host, "-p", str(port),
            *(["--nonblocked"] if busy else [])]


def _plans(ctx: Context, host: str, port: str, pin: tuple[int, int] | None,
           own_server: bool, unavailable: str | None = None) -> list[Plan]:
    """sockperf ping-pong per size of a *_rr run with one stream against host:port; with own_server, its own
    server (sr) on the same host, started first."""
    op = op_of(ctx)
    if op not in ("tcp_rr", "udp_rr"):
        return []
    if 1 not in [int(s) for s in as_list(ctx.params.get("streams") or 1)]:
        return []
    tcp = op == "tcp_rr"  # sockperf's default is UDP
    busy = ctx.params.get("poll") == "busy"
    # sockperf discards its first 400 ms and last 50 ms itself: -t covers our warm-up and measured time
    duration = whole_s(float(ctx.params.get("duration_s") or 3) + float(ctx.params.get("warmup_s") or 0))
    client_cpu, server_cpu = pin if pin else (None, None)
    out = []
    for size in as_list(ctx.params.get("sizes")):
        # sockperf takes MIN_SIZE..UDP_MAX: a row outside gets sockperf at its nearest size, named as such
        run_at = min(max(int(size), MIN_SIZE), UDP_MAX)
        note = None if run_at == int(size) else (
            f"sockperf at {run_at} B, its {'smallest' if run_at == MIN_SIZE else 'largest'} message "
            f"({MIN_SIZE}-{UDP_MAX} B); this row is {int(size)} B")
        argv = client_argv(host, port, run_at, duration, tcp, busy, client_cpu)
        server = server_argv(host, port, tcp, busy, server_cpu) if own_server else []
        out.append(Plan(
            tool="sockperf", argv=tuple(argv), needs=("sockperf",) if pin else (), parser=parse_rr,
            primary="round_trips_per_s", matches={"op": op, "threads": 1, "block_bytes": size},
            server_argv=tuple(server), server_proto="tcp" if tcp else "udp", unavailable=unavailable,
            timeout_s=duration + NET_MARGIN_S, note=note, typical_s=duration + NET_START_S,
            what=f"sockperf ping-pong {'TCP' if tcp else 'UDP'}, {run_at} B",
        ))
    return out


def plans(ctx: Context, affinity: Sequence[int] | None = None) -> list[Plan]:
    """sockperf ping-pong per size of a *_rr run with one stream (sockperf pp drives one connection; our
    rows with several streams have no counterpart): its own server (sr), --full-rtt so the figures are
    whole round trips as ours, --nonblocked on both ends under poll=busy, client and server pinned with
    taskset like our kernel's. Our RT/s is matched by round_trips_per_s = 1e6 / the average round trip."""
    return _plans(ctx, "127.0.0.1", PORT, net_cpus(affinity), own_server=True)


def peer_plans(ctx: Context) -> list[Plan]:
    """sockperf ping-pong as on loopback, against the peer's `sockperf sr` (TCP or UDP as the op)."""
    if op_of(ctx) not in ("tcp_rr", "udp_rr"):
        return []
    port, why = peer_port(ctx, "sockperf")
    return _plans(ctx, peer(ctx), port, None, own_server=False, unavailable=why)


def parse_rr(text: str) -> list[Metric]:
    """The sockperf metrics, led by `round_trips_per_s` = 1e6 / the full-RTT average (µs), then the p50.
    Refuses a one-way (half RTT) report: the run must have used --full-rtt."""
    from . import parse_text  # the registry imports this module

    metrics = parse_text("sockperf", text)["metrics"]
    avg = next((m for m in metrics if m["name"] == "latency_avg"), None)
    if avg is None:
        raise ParseError("the sockperf report has no average latency")
    if avg.get("half_rtt"):
        raise ParseError("sockperf reported one-way latency (RTT / 2): the run needs --full-rtt")
    if avg["value"] <= 0:
        raise ParseError(f"sockperf's average round trip {avg['value']} µs is not a measured figure")
    rate = metric("round_trips_per_s", round_sig(1e6 / avg["value"]), "RT/s",
                  derived="1e6 / sockperf's full-RTT average latency_avg (µs): one connection, one message "
                          "in flight, as our *_rr rows",
                  latency_avg_us=avg["value"], half_rtt=False)
    p50 = [m for m in metrics if m["name"] == "latency_p50"][:1]
    rest = [m for m in metrics if all(m is not p for p in p50)]
    return [rate, *p50, *rest]
