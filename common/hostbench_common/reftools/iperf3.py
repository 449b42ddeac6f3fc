"""iperf3 output: JSON (-J) and the normal text report, client or server side.

Metrics (bit/s = bits per second, decimal): `sent_bps` (the sender's end-of-test average),
`received_bps` (the receiver's), `retransmits` (TCP, sender side); for UDP `lost_percent` and
`jitter_ms` as the receiver measured them. With several streams (-P) the headline rows are iperf3's
sums and each stream adds rows with key `stream` (the socket id). -R runs carry `reverse: true`
(the server sent); --bidir runs add rows with `direction: "reverse"`. The text report prints three
significant figures (12.0 Gbits/sec); JSON carries the exact figure and is what the runner asks for.
Text rates use decimal prefixes for bits (1 Gbit = 10^9 bit) and binary ones for bytes, as iperf3 does.

Refused: an error reported by iperf3 (the JSON "error" key, an "iperf3: error - ..." line, e.g.
"unable to connect to server" or "control socket has closed unexpectedly"); no end-of-test summary
(truncated or interrupted run; a client report must end with "iperf Done."); a malformed summary line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ._common import (
    RATE_UNITS,
    Metric,
    ParseError,
    first_json_object,
    looks_like_json,
    metric,
    not_this_tool,
    rate_to_bps,
    round_sig,
    to_float,
    to_int,
)
from ._net import NET_MARGIN_S, NET_START_S, UDP_MAX, net_cpus, peer, peer_port, whole_s
from .plan import PORT, Context, Plan, as_list, op_of


def parse(text: str) -> tuple[str, list[Metric]]:
    if looks_like_json(text):
        return "json", _parse_json(text)
    return "text", _parse_text(text)


# --- JSON --------------------------------------------------------------------------------------------

def _bps(block: Any, where: str) -> float:
    if not isinstance(block, dict) or "bits_per_second" not in block:
        raise ParseError(f"iperf3 JSON: {where} has no bits_per_second")
    value = block["bits_per_second"]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(f"iperf3 JSON: {where}.bits_per_second is {value!r}")
    return float(value)


def _parse_json(text: str) -> list[Metric]:
    obj, _before = first_json_object(text, "iperf3")
    if "start" not in obj and "end" not in obj and "error" not in obj:
        raise not_this_tool("iperf3", text, "the JSON has no 'start'/'end'")
    if obj.get("error"):
        raise ParseError(f"iperf3 reported an error: {obj['error']!r}")
    end = obj.get("end")
    if not isinstance(end, dict) or not any(k in end for k in ("sum_sent", "sum_received", "sum")):
        raise ParseError("the iperf3 JSON has no end-of-test summary (interrupted or truncated run)")
    test = (obj.get("start") or {}).get("test_start") or {}
    protocol = str(test.get("protocol", "TCP")).upper()
    reverse = bool(test.get("reverse"))
    common: dict[str, Any] = {"protocol": protocol, "reverse": reverse or None}
    metrics: list[Metric] = []

    if protocol == "UDP":
        sent = end.get("sum_sent") or end.get("sum")
        recv = end.get("sum_received")
        metrics.append(metric("sent_bps", _bps(sent, "end.sum_sent"), "bit/s", **common))
        if recv is not None:
            metrics.append(metric("received_bps", _bps(recv, "end.sum_received"), "bit/s", **common))
        quality = recv if recv is not None else end.get("sum")
        metrics.extend(_udp_quality(quality, common))
        streams = end.get("streams") or []
        if len(streams) > 1:
            for s in streams:
                u = s.get("udp") if isinstance(s, dict) else None
                if not isinstance(u, dict):
                    raise ParseError("iperf3 JSON: a UDP stream without its 'udp' block")
                keys = {**common, "stream": u.get("socket")}
                metrics.append(metric("sent_bps", _bps(u, "stream"), "bit/s", **keys))
                metrics.extend(_udp_quality(u, keys))
        return _nonzero(metrics)

    sent, recv = end.get("sum_sent"), end.get("sum_received")
    bidir = "sum_sent_bidir_reverse" in end
    fwd = {**common, "direction": "forward" if bidir else None}
    metrics.append(metric("sent_bps", _bps(sent, "end.sum_sent"), "bit/s", **fwd))
    metrics.append(metric("received_bps", _bps(recv, "end.sum_received"), "bit/s", **fwd))
    if isinstance(sent, dict) and "retransmits" in sent:
        metrics.append(metric("retransmits", to_int(str(sent["retransmits"]), "retransmits"), "count", **fwd))
    if bidir:
        rev = {**common, "direction": "reverse"}
        metrics.append(metric("sent_bps", _bps(end["sum_sent_bidir_reverse"], "bidir reverse"), "bit/s", **rev))
        metrics.append(metric("received_bps", _bps(end.get("sum_received_bidir_reverse"), "bidir reverse"),
                              "bit/s", **rev))
        if "retransmits" in end["sum_sent_bidir_reverse"]:
            metrics.append(metric("retransmits", int(end["sum_sent_bidir_reverse"]["retransmits"]), "count", **rev))
    streams = [s for s in (end.get("streams") or []) if isinstance(s, dict)]

    def is_reverse(s: dict[str, Any]) -> bool:  # --bidir: the stream the server sends on
        return isinstance(s.get("sender"), dict) and s["sender"].get("sender") is False

    for s in streams:
        if sum(1 for o in streams if is_reverse(o) == is_reverse(s)) > 1:  # several streams one way (-P)
            snd, rcv = s.get("sender"), s.get("receiver")
            sock = (snd or rcv or {}).get("socket")
            keys = {**fwd, "stream": sock}
            if is_reverse(s):
                keys["direction"] = "reverse"
            metrics.append(metric("sent_bps", _bps(snd, "stream sender"), "bit/s", **keys))
            metrics.append(metric("received_bps", _bps(rcv, "stream receiver"), "bit/s", **keys))
            if isinstance(snd, dict) and "retransmits" in snd:
                metrics.append(metric("retransmits", int(snd["retransmits"]), "count", **keys))
    return _nonzero(metrics)


def _udp_quality(block: Any, keys: dict[str, Any]) -> list[Metric]:
    if not isinstance(block, dict):
        raise ParseError("iperf3 JSON: no UDP receiver summary (jitter, loss)")
    out = []
    for key, unit in (("lost_percent", "%"), ("jitter_ms", "ms")):
        if key not in block:
            raise ParseError(f"iperf3 JSON: the UDP summary has no {key}")
        value = block[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ParseError(f"iperf3 JSON: {key} is {value!r}")
        counts = {"lost_packets": block.get("lost_packets"), "packets": block.get("packets")} \
            if key == "lost_percent" else {}
        out.append(metric(key, float(value), unit, **counts, **keys))
    return out


def _nonzero(metrics: list[Metric]) -> list[Metric]:
    rates = [m["value"] for m in metrics if m["name"] in ("sent_bps", "received_bps")]
    if not rates or max(rates) <= 0:
        raise ParseError("iperf3 transferred no data (every rate is 0)")
    return sorted(metrics, key=lambda m: "stream" in m)  # totals first, then each stream


# --- text --------------------------------------------------------------------------------------------

_SUMMARY = re.compile(
    r"^\[\s*(\d+|SUM)\](?:\[(TX|RX)-([CS])\])?\s+([\d.]+)-([\d.]+)\s+sec\s+([\d.]+)\s+(\S*Bytes)\s+"
    rf"([\d.]+)\s+({RATE_UNITS})(.*)\s(sender|receiver)\s*$"  # greedy (.*) and one \s: linear time per line
)
_UDP_TAIL = re.compile(r"^\s*([\d.]+)\s+ms\s+(\d+)/(\d+)\s+\(([\d.e+-]+)%\)\s*$")


def _parse_text(text: str) -> list[Metric]:
    err = re.search(r"^iperf3: (error|interrupt) - .*$", text, re.M)
    if err:
        raise ParseError(f"iperf3 reported an error: {err.group(0).strip()!r}")
    client = re.search(r"^Connecting to host \S+, port \d+", text, re.M) is not None
    server = re.search(r"^Server listening on \d+", text, re.M) is not None
    if not client and not server:
        raise not_this_tool("iperf3", text, "no 'Connecting to host' or 'Server listening on' line")
    if client and "iperf Done." not in text:
        raise ParseError("the iperf3 client report does not end with 'iperf Done.' (truncated or interrupted)")
    lines = text.split("\n")
    seps = [i for i, line in enumerate(lines) if re.match(r"^(- ){10,}-?\s*$", line)]
    if not seps:
        raise ParseError("no end-of-test summary in the iperf3 report (truncated or interrupted run)")
    udp = re.search(r"Jitter\s+Lost/Total Datagrams", text) is not None
    reverse = re.search(r"^Reverse mode, remote host", text, re.M) is not None
    summary_rows = []
    for i in range(seps[-1] + 1, len(lines)):
        line = lines[i]
        if not line.startswith("["):
            continue
        if line.startswith("[ ID]"):
            continue
        m = _SUMMARY.match(line)
        if m is None:
            if re.match(r"^\[\s*(\d+|SUM)\]", line):
                raise ParseError(f"malformed iperf3 summary line {i + 1}: {line.strip()[:90]!r}")
            continue
        summary_rows.append((i, m))
    if not summary_rows:
        raise ParseError("no sender/receiver summary lines in the iperf3 report (truncated, or an iperf3 older "
                         "than 3.2 whose UDP summary is not tagged)")

    common = {"protocol": "UDP" if udp else "TCP", "reverse": reverse or None, "side": "client" if client else "server"}

    def way(m: re.Match[str]) -> str | None:  # --bidir: [TX-C] the client sends (forward), [RX-C] it receives
        return None if m.group(2) is None else ("forward" if (m.group(2) == "TX") == (m.group(3) == "C") else "reverse")

    sums = {way(m) for _i, m in summary_rows if m.group(1) == "SUM"}
    ids: dict[str | None, set[str]] = {}
    for _i, m in summary_rows:
        if m.group(1) != "SUM":
            ids.setdefault(way(m), set()).add(m.group(1))
    metrics: list[Metric] = []
    for i, m in summary_rows:
        sid, role, direction = m.group(1), m.group(11), way(m)
        several = len(ids.get(direction, ())) > 1
        if sid != "SUM" and direction in sums and not several:
            continue  # a [SUM] of one stream says the same
        keys: dict[str, Any] = dict(common)
        if sid != "SUM" and (direction in sums or several):
            keys["stream"] = int(sid)
        if direction is not None:
            keys["direction"] = direction
        bps = rate_to_bps(m.group(8), m.group(9), f"iperf3 line {i + 1}")
        transferred = to_float(m.group(6), "transfer")
        tail = m.group(10)
        if role == "sender":
            if not client and transferred == 0:  # old servers print an empty sender line
                continue
            metrics.append(metric("sent_bps", bps, "bit/s", **keys))
            if not udp:
                r = re.match(r"^\s*(\d+)\s*$", tail)
                if r:
                    metrics.append(metric("retransmits", int(r.group(1)), "count", **keys))
                elif tail.strip():
                    raise ParseError(f"iperf3 line {i + 1}: unexpected text after the rate: {tail.strip()!r}")
        else:
            metrics.append(metric("received_bps", bps, "bit/s", **keys))
            if udp:
                u = _UDP_TAIL.match(tail)
                if u is None:
                    raise ParseError(f"iperf3 UDP receiver line {i + 1} has no 'jitter ms lost/total (pct%)'")
                metrics.append(metric("lost_percent", to_float(u.group(4), "lost percent"), "%",
                                      lost_packets=int(u.group(2)), packets=int(u.group(3)), **keys))
                metrics.append(metric("jitter_ms", to_float(u.group(1), "jitter"), "ms", **keys))
    if not metrics:
        raise ParseError("the iperf3 summary holds no usable figure")
    return _nonzero(metrics)


# --- argv and the reference runs -------------------------------------------------------------------------


IPERF3_UDP_MIN = 16  # iperf3's smallest UDP datagram (-l), its own header included


def client_argv(host: str, port: str | int, duration_s: int, size: int | str, streams: int | str = 1,
                udp: bool = False, omit_s: int = 0, pin: tuple[int, int] | None = None,
                extra: Sequence[str] = ()) -> list[str]:
    """An iperf3 client, JSON on stdout: -l size -P streams for duration_s whole seconds; UDP unthrottled
    (-u -b 0, never -O: iperf3 3.x counts omitted datagrams as lost), TCP omitting its first omit_s seconds;
    pin: client and server CPUs (-A c,s)."""
    argv = ["iperf3", "-c", host, "-p", str(port), "-J", "-t", str(duration_s), "-l", str(size), "-P", str(streams)]
    if udp:
        argv += ["-u", "-b", "0"]
    elif omit_s:
        argv += ["-O", str(omit_s)]
    if pin:
        argv += ["-A", f"{pin[0]},{pin[1]}"]
    return argv + list(extra)


def server_argv(bind: str, port: str | int, one_off: bool = False, extra: Sequence[str] = ()) -> list[str]:
    """iperf3's server on bind:port; one_off (-1): it serves one client and exits."""
    return ["iperf3", "-s", *(["-1"] if one_off else []), "-p", str(port), "-B", bind, *extra]


def _plans(ctx: Context, host: str, port: str, pin: tuple[int, int] | None,
           server: tuple[str, ...] = (), unavailable: str | None = None) -> list[Plan]:
    """iperf3 clients per (size, streams) of a *_stream run against host:port, matched to our rows."""
    op = op_of(ctx)
    if op not in ("tcp_stream", "udp_stream"):
        return []
    udp = op == "udp_stream"
    duration = whole_s(ctx.params.get("duration_s") or 5)
    warmup = whole_s(ctx.params.get("warmup_s") or 0, least=0)
    out = []
    for size in as_list(ctx.params.get("sizes")):
        if udp and int(size) > UDP_MAX:
            continue
        # iperf3 refuses a smaller UDP datagram ("block size invalid (minimum = 16 bytes)"): its own header
        # rides in each one. The row says so instead of carrying a failed run (the first full suite had one).
        too_small = (f"iperf3 sends UDP datagrams of {IPERF3_UDP_MIN} B or more (its own header is in each); "
                     f"{size} B has no iperf3 figure") if udp and int(size) < IPERF3_UDP_MIN else None
        for streams in as_list(ctx.params.get("streams") or 1):
            argv = client_argv(host, port, duration, size, streams, udp=udp, omit_s=warmup,
                               pin=pin if int(streams) == 1 else None)
            out.append(Plan(
                tool="iperf3", argv=tuple(argv), parser=parse_received_mbps, primary="received_mbps",
                matches={"op": op, "threads": streams, "block_bytes": size},
                server_argv=server, server_proto="tcp", unavailable=unavailable or too_small,
                timeout_s=duration + warmup + NET_MARGIN_S, typical_s=duration + warmup + NET_START_S,
                what=f"iperf3 {'UDP' if udp else 'TCP'}, {size} B, {streams} stream{'s' if int(streams) > 1 else ''}",
            ))
    return out


def plans(ctx: Context, affinity: Sequence[int] | None = None) -> list[Plan]:
    """iperf3 per (size, streams) of a *_stream run: a one-off server of its own on a free loopback port,
    the client with -l size -P streams, JSON; the receiver's sum in Mbit/s is the figure, as ours. One
    stream runs pinned like our kernel's (client, server on two CPUs: -A c,s); several streams are left
    to the OS (iperf3 before 3.16 drives them all from one thread)."""
    return _plans(ctx, "127.0.0.1", PORT, net_cpus(affinity),
                  server=tuple(server_argv("127.0.0.1", PORT, one_off=True)))


def peer_plans(ctx: Context) -> list[Plan]:
    """iperf3 as on loopback (same sizes, streams, duration, protocol), against the peer's `iperf3 -s`.
    Not pinned: -A would pin the remote server too, and our driving kernel leaves placement to the OS."""
    if op_of(ctx) not in ("tcp_stream", "udp_stream"):
        return []
    port, why = peer_port(ctx, "iperf3")
    return _plans(ctx, peer(ctx), port, None, unavailable=why)


def parse_received_mbps(text: str) -> list[Metric]:
    """The iperf3 metrics, led by `received_mbps`: the receiver's sum (all streams) / 1e6, our kernel's unit."""
    from . import parse_text  # the registry imports this module

    metrics = parse_text("iperf3", text)["metrics"]
    rx = next((m for m in metrics if m["name"] == "received_bps" and "stream" not in m
               and m.get("direction") is None), None)
    if rx is None:
        return metrics
    extra = {k: rx[k] for k in ("protocol", "reverse") if k in rx}
    mbps = metric("received_mbps", round_sig(rx["value"] / 1e6), "Mbit/s",
                  derived="received_bps / 1e6: iperf3's receiver-side sum over all streams (end.sum_received)",
                  **extra)
    return [mbps, *metrics]
