"""The bounds behind a verdict that more than one part acts on: the backend judges a result with them
(backend/app/results/verdict.py), the runner waits for a quiet CPU and repeats a disturbed run with them
(runner/hostbench_runner/quiet.py). docs/methodology/verdicts.md says why each value.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

# A kernel whose threads got less than this share of the CPU time they could have had was disturbed.
# 0.90: the sampler thread and a VM's timer work cost about 1 %; a share of 0.9 already moves a CPU-bound
# figure by 10 %, more than the repeat-to-repeat spread of a quiet host.
DISTURBED_SHARE = 0.90
# Threads that sleep by design (a socket, a block device) are judged by their run-queue wait instead (the
# kernel's `wait_share`: the share of the phase they spent runnable but waiting for a CPU, the time others
# took from them): the same bound, seen from the other side.
DISTURBED_WAIT = round(1 - DISTURBED_SHARE, 6)
# The spread between repeats above which a row is `unstable`: the run's own repeat-until-stable bound
# (stable_cv) where it set one, else this. The coefficient of variation is the one repeat-until-stable
# stops on: the sample standard deviation of the repeats' rates over their mean.
SPREAD_CV = 0.10
# UDP datagrams (udp_stream) or requests (udp_rr) lost above this percentage: `lossy`.
LOSSY_PCT = 1.0


def spread_bound(params: Mapping[str, Any]) -> float:
    """The CV bound a run's rows are held to: its stable_cv when it set one, else SPREAD_CV."""
    asked = params.get("stable_cv")
    if isinstance(asked, int | float) and not isinstance(asked, bool) and math.isfinite(asked) and asked > 0:
        return float(asked)
    return SPREAD_CV


def disturbed(result: Mapping[str, Any], cpu_bound: bool) -> bool:
    """Whether one kernel result line (one repeat) was disturbed: a CPU-bound kernel's threads got less than
    DISTURBED_SHARE of the CPU; threads that sleep by design waited for a CPU more than DISTURBED_WAIT of the
    phase. An oversubscribed repeat shares its CPUs by design (its own verdict; the backend
    judges its share against CPUs / threads): a quiet host would not change it, so it is never `disturbed` here."""
    if result.get("oversubscribed") is True:
        return False
    if cpu_bound:
        share = result.get("cpu_share")
        return _number(share) and float(share) < DISTURBED_SHARE
    wait = result.get("wait_share")
    return _number(wait) and float(wait) > DISTURBED_WAIT


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
