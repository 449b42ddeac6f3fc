"""The reference tools' plan builders by tool name (each in its tool's module, beside its parser), and `plan`,
which turns a run's Context into the plans the engine runs. Which tools a run kind has is the experiment table's
(`Run.references` in hostbench_common/experiments.py): never a second list of experiments here."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from ..experiments import ROLE_OF, RUNS
from . import fio, hpcc, iozone, iperf3, likwid, ping, sockperf, stream
from .plan import Builder, Context, Plan, entry

log = logging.getLogger("hostbench.reference")


@dataclass(frozen=True)
class Tool:
    """A reference tool's plan builders: on one host, and from a driving host against its peer's servers."""

    on_host: Builder | None
    against_peer: Builder | None = None


# Which tools a run kind has is the experiment table's (hostbench_common.experiments, Run.references).
TOOLS: dict[str, Tool] = {
    "hpcc": Tool(hpcc.plans),
    "likwid-bench": Tool(likwid.plans),
    "stream": Tool(stream.plans),
    "fio": Tool(fio.plans),
    "iozone": Tool(iozone.plans),
    "iperf3": Tool(iperf3.plans, iperf3.peer_plans),
    "sockperf": Tool(sockperf.plans, sockperf.peer_plans),
    "ping": Tool(ping.plans, ping.peer_plans),
}


def builders(run_kind: str) -> list[tuple[str, Builder]]:
    """(tool, builder) for each reference tool of a run kind: a driving run's run against its peer."""
    run = RUNS.get(run_kind)
    if run is None:
        return []
    drive = ROLE_OF.get(run_kind) == "drive"
    out: list[tuple[str, Builder]] = []
    for name in run.references:
        build = TOOLS[name].against_peer if drive else TOOLS[name].on_host
        if build is None:
            raise ValueError(f"reference tool {name} has no plan for a {ROLE_OF.get(run_kind)} run")
        out.append((name, build))
    return out


# What each tool measures, in the words of a "none" entry (no tool for an op names what exists).
COVERS: dict[str, str] = {
    "hpcc": "hpcc (HPL: FP64 only)",
    "likwid-bench": "likwid-bench (peakflops: FP64 and FP32; memory: load for read, store_mem for write, copy_mem "
                    "and stream_mem for stream_copy_nt and stream_triad_nt)",
    "stream": "STREAM, standalone or hpcc's (Copy, Scale, Add, Triad over whole arrays: copy and the stream_* ops)",
    "fio": "fio (every disk op)",
    "iozone": "IOzone (sequential and random reads and writes)",
    "iperf3": "iperf3 (tcp_stream, udp_stream)",
    "sockperf": "sockperf (tcp_rr, udp_rr, one connection)",
    "ping": "ping (ICMP echo, context only)",
}
# Why no tool applies, where more can be said than COVERS (a Debian tool that would measure it honestly: none).
NO_TOOL_WHY: dict[str, str] = {
    "int32": "no Debian tool measures 32-bit integer operations per second as our kernel counts them (HPL and "
             "likwid-bench's peakflops count floating-point operations only)",
    "latency": "lmbench's lat_mem_rd measures it but is not packaged in Debian main",
    "rand_read": "no Debian tool reads random blocks of a buffer in memory (likwid-bench's tests sweep arrays)",
    "rand_write": "no Debian tool writes random blocks of a buffer in memory (likwid-bench's tests sweep arrays)",
}


def _ops(ctx: Context) -> list[str]:
    ops = ctx.params.get("op", ctx.params.get("ops"))
    values = ops if isinstance(ops, list) else [ops]
    return [op for op in values if isinstance(op, str)]


def uncovered(ctx: Context, plans: list[Plan], broken: list[dict[str, Any]]) -> list[Plan]:
    """A "none" plan for each op of the run that no plan (nor a broken builder) stands beside: the row then says
    why it has no reference, never nothing."""
    run = RUNS.get(ctx.experiment)
    if run is None or ROLE_OF.get(ctx.experiment) == "serve":  # a serve run's tools run on its driving peer
        return []
    seen = {p.matches.get("op") for p in plans} | {(b.get("matches") or {}).get("op") for b in broken}
    exists = "; ".join(COVERS.get(t, t) for t in run.references) or "none for this experiment"
    out = []
    for op in _ops(ctx):
        if op in seen:
            continue
        why = f"no reference tool measures {op}" + (f": {NO_TOOL_WHY[op]}" if op in NO_TOOL_WHY else "")
        out.append(Plan(tool="none", argv=(), parser="none", matches={"op": op, "threads": None, "block_bytes": None},
                        no_tool=f"{why}. Tools of this experiment: {exists}"))
    return out


def plan(ctx: Context) -> tuple[list[Plan], list[dict[str, Any]]]:
    """The plans for this run, and a failed entry for any builder that broke (a bug must not fail the run); an op
    that no tool measures gets a "none" plan saying why (`uncovered`)."""
    plans: list[Plan] = []
    broken: list[dict[str, Any]] = []
    for tool, build in builders(ctx.experiment):
        try:
            plans.extend(build(ctx))
        except Exception as exc:
            log.exception("reference builder %s failed", tool)
            broken.append(entry(tool, "failed", f"cannot plan {tool}: {type(exc).__name__}: {exc}"[:2000],
                                [], {"op": ctx.params.get("op")}))
    return plans + uncovered(ctx, plans, broken), broken
