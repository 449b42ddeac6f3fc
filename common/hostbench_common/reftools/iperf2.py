"""iperf 2 text output (2.0.x and 2.1.x, plain and enhanced -e), client or server side, TCP or UDP.

iperf 2 reports each connection once at the end: a line "[ ID] 0.0-10.0 sec  Transfer  Bandwidth"
(the line of the connection that starts at 0 and covers the whole test; with -i, the per-interval
lines before it are ignored), and [SUM] for parallel streams (-P). A connection is *sent* when this
host opened it and *received* when it arrived on the port this host listens on (server side, and the
return leg of -d/-r tests, which gets `direction: "reverse"`). So a TCP client yields `sent_bps`
(and `retransmits` with -e), a server `received_bps`; iperf 2's TCP client never sees the receiver's
figure, so we do not invent one. A UDP client's "Server Report" gives `received_bps`, `lost_percent`
and `jitter_ms`; a UDP server's own lines give the same. Rates are bit/s (decimal prefixes).

Refused: iperf 2's own error lines ("connect failed", "write failed", "read failed", an assertion);
a UDP client without its server report ("did not receive ack of last datagram": nobody measured what
arrived); no final report line (truncated); a malformed report line.
"""

from __future__ import annotations

import re
from typing import Any

from ._common import RATE_UNITS, Metric, ParseError, metric, not_this_tool, rate_to_bps, to_float

_ID = r"\[\s*(\d+|SUM(?:-\d+)?)\]"
_REPORT = re.compile(
    rf"^{_ID}\s+([\d.]+)\s*-\s*([\d.]+)\s+sec\s+([\d.]+)\s+(\S*Bytes)\s+([\d.]+)\s+({RATE_UNITS})(.*)$"
)
_CONNECT = re.compile(r"^\[\s*(\d+)\]\s+local\s+\S+\s+port\s+(\d+)\s+connected with\s+\S+\s+port\s+(\d+)")
_UDP_TAIL = re.compile(r"^\s+([\d.]+)\s+ms\s+(\d+)/\s*(\d+)\s+\(([\d.e+-]+)%\)")
_ENHANCED_TCP_TAIL = re.compile(r"^\s+(\d+)/(\d+)\s+(\d+)\s")
_ERRORS = re.compile(
    r"^(?:.*\b(?:connect|write|read|shutdown|bind|listen) failed\b.*"
    r"|.*WARNING: did not receive ack of last datagram.*"
    r"|.*Assertion .* failed.*"
    r"|iperf: .*error.*)$",
    re.M | re.I,
)


def parse(text: str) -> tuple[str, list[Metric]]:
    client = re.search(r"^Client connecting to \S+, (TCP|UDP) port (\d+)", text, re.M)
    server = re.search(r"^Server listening on (TCP|UDP) port (\d+)", text, re.M)
    if client is None and server is None:
        raise not_this_tool("iperf2", text, "no 'Client connecting to ..., TCP|UDP port' or "
                            "'Server listening on TCP|UDP port' line")
    err = _ERRORS.search(text)
    if err:
        raise ParseError(f"iperf reported an error: {err.group(0).strip()!r}")
    protocol = (client or server).group(1)  # type: ignore[union-attr]
    listen_port = int(server.group(2)) if server else None
    lines = text.split("\n")

    # which connections arrived on our listening port
    incoming: set[str] = set()
    for line in lines:
        c = _CONNECT.match(line.strip())
        if c and listen_port is not None and int(c.group(2)) == listen_port:
            incoming.add(c.group(1))

    # final report per connection id: start 0, latest end; a line right after "Server Report:" is the
    # receiver's figure for that client connection
    finals: dict[tuple[str, bool], tuple[int, re.Match[str], float]] = {}
    server_report_next = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if re.match(rf"^{_ID}\s+Server Report:", stripped):
            server_report_next = True
            continue
        if not stripped.startswith("["):
            continue
        m = _REPORT.match(stripped)
        if m is None:
            if re.match(rf"^{_ID}\s+[\d.]+\s*-\s*[\d.]+\s+sec", stripped):
                raise ParseError(f"malformed iperf report line {i + 1}: {stripped[:90]!r}")
            continue
        is_server_report = server_report_next
        if is_server_report:
            server_report_next = False
        start, end = to_float(m.group(2), "interval"), to_float(m.group(3), "interval")
        if start != 0:
            continue
        key = (m.group(1), is_server_report)
        if key not in finals or end >= finals[key][2]:
            finals[key] = (i, m, end)
    if not finals:
        raise ParseError("no final iperf report line ('[ ID] 0.0-N sec ... bits/sec'): truncated output?")

    udp = protocol == "UDP"
    if udp and client is not None and not any(rep for (_sid, rep) in finals):
        raise ParseError("the iperf UDP client got no 'Server Report': what arrived was not measured")

    def role(sid: str, is_report: bool) -> str:
        """'sent' for a connection this host opened, 'received' for one it accepted or a server report."""
        if is_report or client is None:
            return "received"
        if sid.startswith("SUM"):
            return "sent"
        return "received" if sid in incoming else "sent"

    roles = {key: role(*key) for key in finals}
    per_role: dict[str, set[str]] = {}
    for (sid, _rep), r in roles.items():
        if not sid.startswith("SUM"):
            per_role.setdefault(r, set()).add(sid)
    sums = {r for (sid, rep), r in roles.items() if sid.startswith("SUM")}
    metrics: list[Metric] = []
    for (sid, is_report), (i, m, _end) in sorted(finals.items(), key=lambda kv: kv[1][0]):
        r = roles[(sid, is_report)]
        several = r in sums or len(per_role.get(r, ())) > 1
        if not sid.startswith("SUM") and r in sums and len(per_role.get(r, ())) < 2:
            continue  # a [SUM] of one stream: the stream line says the same
        keys: dict[str, Any] = {"protocol": protocol}
        if not sid.startswith("SUM") and several:
            keys["stream"] = int(sid)
        if client is not None and not is_report and r == "received":  # -d/-r: the peer's connection back to us
            keys["direction"] = "reverse"
        bps = rate_to_bps(m.group(6), m.group(7), f"iperf line {i + 1}")
        tail = m.group(8)
        if r == "sent":
            metrics.append(metric("sent_bps", bps, "bit/s", **keys))
            t = _ENHANCED_TCP_TAIL.match(tail)
            if not udp and t:
                metrics.append(metric("retransmits", int(t.group(3)), "count", **keys))
            continue
        metrics.append(metric("received_bps", bps, "bit/s", **keys))
        if udp:
            u = _UDP_TAIL.match(tail)
            if u is None:
                raise ParseError(f"iperf UDP receiver line {i + 1} lacks 'jitter ms lost/total (pct%)'")
            metrics.append(metric("lost_percent", to_float(u.group(4), "lost percent"), "%",
                                  lost_packets=int(u.group(2)), packets=int(u.group(3)), **keys))
            metrics.append(metric("jitter_ms", to_float(u.group(1), "jitter"), "ms", **keys))
    rates = [x["value"] for x in metrics if x["name"].endswith("_bps")]
    if not rates or max(rates) <= 0:
        raise ParseError("iperf transferred no data (every rate is 0)")
    return "text", sorted(metrics, key=lambda x: "stream" in x)  # totals first, then each stream
