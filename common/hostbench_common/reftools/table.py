"""Which reference tools each experiment has: experiment -> builders (each in its tool's module, beside its
parser), and `plan`, which turns a run's Context into the plans the engine runs."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from . import fio, hpcc, iozone, iperf3, likwid, ping, sockperf, stream
from .plan import Builder, Context, Plan, entry

log = logging.getLogger("hostbench.reference")


@dataclass(frozen=True)
class Reference:
    tool: str
    build: Builder


REFERENCES: dict[str, tuple[Reference, ...]] = {
    "cpu": (Reference("hpcc", hpcc.plans), Reference("likwid-bench", likwid.plans)),
    "cpu_trace": (),  # a 10-minute trace has no reference tool
    # Two-host jobs: the serving side measures nothing; it offers reference servers (serve.py) that the
    # driving side's tools run against.
    "network_serve": (),
    "network_drive": (Reference("iperf3", iperf3.peer_plans), Reference("sockperf", sockperf.peer_plans),
                      Reference("ping", ping.peer_plans)),
    "memory": (Reference("stream", stream.plans),),
    "disk": (Reference("fio", fio.plans), Reference("iozone", iozone.plans)),
    "network": (Reference("iperf3", iperf3.plans), Reference("sockperf", sockperf.plans),
                Reference("ping", ping.plans)),
    "gpu": (),  # vendor peaks are computed from device attributes, there is no tool to run
}


def plan(ctx: Context) -> tuple[list[Plan], list[dict[str, Any]]]:
    """The plans for this run, and a failed entry for any builder that broke (a bug must not fail the run)."""
    plans: list[Plan] = []
    broken: list[dict[str, Any]] = []
    for ref in REFERENCES.get(ctx.experiment, ()):
        try:
            plans.extend(ref.build(ctx))
        except Exception as exc:
            log.exception("reference builder %s failed", ref.tool)
            broken.append(entry(ref.tool, "failed", f"cannot plan {ref.tool}: {type(exc).__name__}: {exc}"[:2000],
                                [], {"op": ctx.params.get("op")}))
    return plans, broken
