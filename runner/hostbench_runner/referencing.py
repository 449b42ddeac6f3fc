"""Running the reference tools of a run (hostbench_common/reftools/): after our kernel succeeded, and only when
the job asked for them, the classic tools for the same experiment run on the same host with matched parameters,
one at a time, while the run's lease is held; their figures go in the finish payload under `references`
(docs/api.md). The daemon's loop drives the phase one step per turn (state REFERENCING), so a cancel or a
shutdown stops a tool at once."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hostbench_common.reftools import table
from hostbench_common.reftools.engine import ReferencePhase
from hostbench_common.reftools.plan import Context

log = logging.getLogger("hostbench.daemon")


def mem_bytes(inv: Mapping[str, Any] | None) -> int | None:
    total = ((inv or {}).get("memory") or {}).get("total_bytes")
    if isinstance(total, int) and total > 0:
        return total
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return None


@dataclass
class ReferenceRun:
    """A run's reference tools: whether the job asked for them, the peer's servers (network_drive) and the phase."""

    wanted: bool = False
    # network_drive: the ports of the peer's reference servers, from the assignment (the server's records).
    ports: dict[str, int] = field(default_factory=dict)
    # The job's runner parameters for its tools (Run.runner_params: cpu's hpl_n), from the validated params.
    options: dict[str, Any] = field(default_factory=dict)
    phase: ReferencePhase | None = None

    def begin(self, run_id: Any, experiment: Any, params: dict[str, Any] | None, start: Mapping[str, Any] | None,
              results: Sequence[Mapping[str, Any]], inventory: dict[str, Any] | None, work_dir: Path | None,
              deadline_at: float) -> bool:
        """Plan the reference runs of a kernel that succeeded; True when there is one to run."""
        if not self.wanted or work_dir is None or params is None or not isinstance(experiment, str):
            return False
        ctx = Context(
            experiment=experiment, params=params, start=start, results=results, inventory=inventory,
            cpus=len(os.sched_getaffinity(0)), mem_bytes=mem_bytes(inventory),
            is_root=os.geteuid() == 0, reference_ports=self.ports, options=self.options,
        )
        plans, broken = table.plan(ctx)
        self.phase = ReferencePhase(plans, work_dir / "references", deadline_at, broken=broken)
        if self.phase.done:
            return False
        log.info("run=%s: %d reference run(s): %s", run_id, len(plans),
                 ", ".join(f"{p.tool}@{p.matches.get('threads')}" for p in plans))
        return True

    @property
    def running(self) -> bool:
        return self.phase is not None and not self.phase.done

    def report(self) -> list[dict[str, Any]]:
        """The finish payload's `references` (empty when no tool was planned)."""
        return self.phase.report() if self.phase is not None else []

    def close(self) -> None:
        if self.phase is not None:
            self.phase.close()
