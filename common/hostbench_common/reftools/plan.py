"""The plan of one reference run, and what a builder may read to make it.

    a builder: Context (our kernel's params, its events, the host) -> [Plan, ...]

A Plan is data: an argv list (never a shell), extra environment, input files, where the output lands and
which parser reads it. The engine (engine.py) runs it; the table (table.py) says which builders each
experiment has; every tool's builder sits beside its parser, in its own module here.

Each plan ends as one entry: {"tool", "status": "ok"|"unavailable"|"failed"|"none", "reason", "note", "argv",
"matches": {"op", "threads", "block_bytes"}, "metrics"}. A tool that is not installed is "unavailable" (the
reason names the Debian package that brings it), never an error of the run; "none": no reference tool measures
the row (the reason says which tools exist and why none applies); "note": how the tool's run differs from the
row it stands beside (sockperf at its nearest size, STREAM from hpcc).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._common import Metric

PORT = "{port}"  # in a plan's argv and server_argv: the free loopback port chosen when it starts

Parser = Callable[[str], list[Metric]]


@dataclass(frozen=True)
class Plan:
    tool: str  # the name reported ("hpcc", "likwid-bench", "stream", "fio")
    argv: tuple[str, ...]  # argv[0] and every name in `needs` are resolved on PATH at run time
    matches: Mapping[str, Any]  # our kernel's row: op, threads, block_bytes
    parser: str | Parser  # a reftools tool name, or a parser of our own
    needs: tuple[str, ...] = ()  # executables besides argv[0] (hpcc needs mpirun)
    env: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)  # written into the tool's directory first
    output: str | None = None  # a file the tool writes in its directory; None = its stdout
    timeout_s: float = 120.0  # the cap: stopped and reported failed after this
    typical_s: float = 0.0  # what it usually takes (the duration estimate; docs/methodology/estimates.md)
    what: str = ""  # the run in a few words, for the run page's phase ("HPL N = 8,064, 2 processes")
    primary: str | None = None  # the metric that matches our kernel's figure: listed first
    # A server of the tool's own (iperf3 -s, sockperf sr), started in the same directory before argv on a
    # free loopback port (PORT in either argv), awaited until it listens (tcp) or is bound (udp), and
    # stopped after the client (SIGTERM, SIGKILL after the grace). Empty: no server.
    server_argv: tuple[str, ...] = ()
    server_proto: str = "tcp"
    # Why this plan cannot run (a two-host job whose peer offered no server for the tool): reported as
    # "unavailable" with this reason, nothing is started.
    unavailable: str | None = None
    # No tool measures this row (INT32, a memory op no tool has): reported as "none" with this reason.
    no_tool: str | None = None
    # How this run differs from the row it stands beside ("sockperf at 14 B, its smallest message"): in the entry.
    note: str | None = None
    # Run instead when argv[0] is not installed (STREAM from hpcc where no `stream` binary exists).
    instead: Plan | None = None


@dataclass
class Context:
    """What a builder may use: the kernel's complete parameters, its start and result events, the host."""

    experiment: str
    params: Mapping[str, Any]
    start: Mapping[str, Any] | None = None
    results: Sequence[Mapping[str, Any]] = field(default_factory=list)
    inventory: Mapping[str, Any] | None = None
    cpus: int = 1
    mem_bytes: int | None = None
    is_root: bool = False
    # network_drive: the ports of the reference servers the peer's serve run offers ({"iperf3": 5201}), from
    # the server's own records (the assignment), never from the job's parameters.
    reference_ports: Mapping[str, int] = field(default_factory=dict)
    # The job's runner parameters that steer its tools (the table's Run.runner_params: cpu's hpl_n), validated
    # with the job's parameters.
    options: Mapping[str, Any] = field(default_factory=dict)


Builder = Callable[[Context], list[Plan]]


# The Debian package that brings each executable a plan runs (named when it is missing).
PACKAGES = {"hpcc": "hpcc", "mpirun": "openmpi-bin", "likwid-bench": "likwid", "fio": "fio", "iozone": "iozone3",
            "iperf3": "iperf3", "sockperf": "sockperf", "ping": "iputils-ping", "taskset": "util-linux"}


def missing(name: str) -> str:
    """Why a plan's executable cannot run, with the package that brings it."""
    pkg = PACKAGES.get(name)
    return f"{name} is not installed on this host" + (f" (Debian: apt install {pkg})" if pkg else "")


def entry(tool: str, status: str, reason: str | None, argv: list[str], matches: Mapping[str, Any],
          metrics: list[Metric] | None = None, note: str | None = None) -> dict[str, Any]:
    return {
        "tool": tool, "status": status, "reason": reason, "note": note, "argv": list(argv),
        "matches": {"op": matches.get("op"), "threads": matches.get("threads"),
                    "block_bytes": matches.get("block_bytes")},
        "metrics": metrics or [],
    }


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def op_of(ctx: Context) -> str | None:
    op = ctx.params.get("op")
    return op if isinstance(op, str) else None
