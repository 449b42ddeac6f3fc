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


def plan(ctx: Context) -> tuple[list[Plan], list[dict[str, Any]]]:
    """The plans for this run, and a failed entry for any builder that broke (a bug must not fail the run)."""
    plans: list[Plan] = []
    broken: list[dict[str, Any]] = []
    for tool, build in builders(ctx.experiment):
        try:
            plans.extend(build(ctx))
        except Exception as exc:
            log.exception("reference builder %s failed", tool)
            broken.append(entry(tool, "failed", f"cannot plan {tool}: {type(exc).__name__}: {exc}"[:2000],
                                [], {"op": ctx.params.get("op")}))
    return plans, broken
