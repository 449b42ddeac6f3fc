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
    to_float,
    to_int,
)


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
    rf"([\d.]+)\s+({RATE_UNITS})(.*?)\s+(sender|receiver)\s*$"
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
