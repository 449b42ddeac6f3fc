"""What the network builders share (iperf3.py, sockperf.py, ping.py): where our loopback kernel puts its two
ends, whole seconds for the tools, and the peer of a two-host job with the ports of its reference servers."""

from __future__ import annotations

import ipaddress
import math
import os
from collections.abc import Sequence

from .plan import PORT, Context

UDP_MAX = 65507  # the largest UDP payload over IPv4
NET_MARGIN_S = 30.0  # beyond the tool's own duration
NET_START_S = 1.0  # a tool's start, its server's and the connection, beyond its own duration


def net_cpus(affinity: Sequence[int] | None = None) -> tuple[int, int] | None:
    """Where our loopback kernel puts one stream: the client on the first CPU of the affinity mask, the
    server on the next one (net.c server_pin_for). None on a single CPU: nothing to pin apart."""
    cpus = sorted(affinity if affinity is not None else os.sched_getaffinity(0))
    return (cpus[0], cpus[1]) if len(cpus) >= 2 else None


def whole_s(value: float, least: int = 1) -> int:
    # iperf3 3.x and sockperf take whole seconds
    return max(least, math.ceil(float(value)))


def peer(ctx: Context) -> str:
    addr = ctx.params.get("peer")
    ipaddress.ip_address(addr if isinstance(addr, str) else "")  # the runner checked it; a bug must not reach argv
    return str(addr)


def peer_port(ctx: Context, tool: str) -> tuple[str, str | None]:
    """(the port as an argv word, None) or (PORT, why the peer offered no server for this tool)."""
    port = ctx.reference_ports.get(tool)
    if isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= 65535:
        return str(port), None
    return PORT, (f"the serving host offered no {tool} server (not installed there, or it did not start; "
                  f"its runner's log says which)")
