"""The bounds behind a verdict that more than one part acts on: the backend judges a result with them
(backend/app/results/verdict.py), the kernels wait for a quiet CPU and repeat a disturbed phase with the
harness parameters they declare (disturbed_wait is one of them). docs/methodology/verdicts.md says why each value.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .describe import DESCRIBE

# A phase whose worker threads spent more than this share of it runnable but waiting for a CPU (the kernel's
# `wait_share`: the time other processes took from them) was disturbed. The kernels' harness parameter
# disturbed_wait declares it (its default), and repeats such a phase with disturbed_retries; 0.10: the sampler
# thread and a VM's timer work cost about 1 %, and losing 10 % of a phase moves a CPU-bound figure by 10 %, more
# than the repeat-to-repeat spread of a quiet host.
DISTURBED_WAIT: float = DESCRIBE["cpu"]["parameters"]["properties"]["disturbed_wait"]["default"]
# The same bound seen from the other side, for CPU-bound kernels: their threads got less than this share of the
# CPU time they could have had (cpu_share; it also sees time a hypervisor took, which the run queue does not).
DISTURBED_SHARE = round(1 - DISTURBED_WAIT, 6)
# The spread between repeats above which a row is `unstable`: the run's own repeat-until-stable bound
# (stable_cv) where it set one, else this. The coefficient of variation is the one repeat-until-stable
# stops on: the sample standard deviation of the repeats' rates over their mean.
SPREAD_CV = 0.10
# UDP datagrams (udp_stream) or requests (udp_rr) lost above this percentage: `lossy`.
LOSSY_PCT = 1.0


def spread_bound(params: Mapping[str, Any]) -> float:
    """The CV bound a run's rows are held to: its stable_cv when it set one, else SPREAD_CV."""
    asked = params.get("stable_cv")
    if isinstance(asked, (int, float)) and not isinstance(asked, bool) and math.isfinite(asked) and asked > 0:
        return float(asked)
    return SPREAD_CV


def busy_summary(results: Sequence[Mapping[str, Any]]) -> dict[str, float] | None:
    """What waiting for a quiet CPU and repeating disturbed phases cost a run (quiet_wait_s, disturbed_retries),
    from its result lines: None when it asked for neither."""
    lines = [r for r in results if _number(r.get("tries")) or _number(r.get("quiet_waited_s"))]
    if not lines:
        return None
    return {"phases": float(len(lines)),
            "waited_s": float(sum(float(r.get("quiet_waited_s") or 0) for r in lines)),
            "tries": float(sum(int(r.get("tries") or 1) for r in lines)),
            "retried_phases": float(sum(1 for r in lines if int(r.get("tries") or 1) > 1)),
            "never_quiet": float(sum(1 for r in lines if r.get("quiet") is False))}


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
