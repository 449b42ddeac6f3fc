"""Helpers of the network and IOzone reference runs (the builders are in reference.py's table):

- a free loopback port for a reference tool's own server, and the readiness wait on it, read from
  /proc/net (a listening TCP socket, a bound UDP one) so that no probe connection is spent: iperf3's
  one-off server (-1) would take a probe for its one client and exit;
- the parsers that add the figure our kernel's row is in: iperf3's receiver sum in Mbit/s
  (`received_mbps`), sockperf's full round trip as round trips per second (`round_trips_per_s`),
  IOzone's KB/s (1 KB = 1024 B) as MB/s (10^6 B/s), ping's average round trip as round trips per second
  and in µs (the units of our *_rr rows and their latency figures). Each derived metric says what it comes
  from; the tool's own figures follow unchanged.
"""

from __future__ import annotations

import socket
from pathlib import Path

from .reftools import Metric, ParseError, parse_text
from .reftools._common import metric, round_sig

PROC_NET = Path("/proc/net")


# --- the reference server's port ------------------------------------------------------------------------


def free_port(proto: str = "tcp", host: str = "127.0.0.1", tries: int = 20) -> int:
    """A loopback port free for TCP, and for UDP too when the server binds UDP (sockperf's default)."""
    for _ in range(tries):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
        if proto != "udp":
            return port
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                u.bind((host, port))
            return port
        except OSError:
            continue
    raise OSError(f"no free loopback port for a {proto} server after {tries} tries")


def port_ready(port: int, proto: str = "tcp", proc_net: Path = PROC_NET) -> bool | None:
    """True when a socket listens (TCP, state 0A) or is bound (UDP) on this local port, as /proc/net
    lists it; None when /proc/net cannot be read (the caller then waits a moment instead)."""
    names = ("tcp", "tcp6") if proto == "tcp" else ("udp", "udp6")
    seen_any = False
    for name in names:
        try:
            lines = (proc_net / name).read_text().splitlines()[1:]
        except OSError:
            continue
        seen_any = True
        for line in lines:
            cols = line.split()
            if len(cols) < 4 or ":" not in cols[1]:
                continue
            try:
                local = int(cols[1].rsplit(":", 1)[1], 16)
            except ValueError:
                continue
            if local == port and (proto != "tcp" or cols[3] == "0A"):
                return True
    return False if seen_any else None


# --- parsers that add our kernel's unit -----------------------------------------------------------------


def parse_iperf3(text: str) -> list[Metric]:
    """reftools' iperf3 metrics, led by `received_mbps`: the receiver's sum (all streams) / 1e6."""
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


def parse_sockperf_rr(text: str) -> list[Metric]:
    """reftools' sockperf metrics, led by `round_trips_per_s` = 1e6 / the full-RTT average (µs), then
    the p50. Refuses a one-way (half RTT) report: the run must have used --full-rtt."""
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


def parse_iozone_mb(text: str) -> list[Metric]:
    """reftools' iozone metrics (KB/s, 1 KB = 1024 B), each preceded by `<test>_mb_s` in MB/s
    (value x 1024 / 1e6), the unit of our disk kernel."""
    metrics = parse_text("iozone", text)["metrics"]
    out: list[Metric] = []
    for m in metrics:
        if m.get("unit") == "KB/s":
            extra = {k: v for k, v in m.items() if k not in ("name", "value", "unit")}
            out.append(metric(f"{m['name']}_mb_s", round_sig(m["value"] * 1024 / 1e6), "MB/s",
                              derived=f"iozone's {m['name']} in KB/s (1 KB = 1024 B) x 1024 / 1e6",
                              printed=m["value"], **extra))
        out.append(m)
    return out


PING_MEASURES = "ping: ICMP echo round trip, kernel-to-kernel, no socket stack of ours"


def parse_ping_rr(text: str, payload_bytes: int | None = None) -> list[Metric]:
    """reftools' ping metrics, led by `round_trips_per_s` = 1e6 / rtt_avg in µs (our *_rr rows are RT/s, so
    the ratio is computed on it) and `rtt_avg_us` (beside our rows' latency_avg_us). Every metric says what
    ping measures: the ratio is context, not a like-for-like comparison. A run with no reply is refused."""
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
