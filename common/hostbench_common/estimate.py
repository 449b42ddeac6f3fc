"""Duration estimates, apart from their caps (docs/methodology/estimates.md).

A run's *typical* time is what it usually takes: its kernel's configurations x (warmup_s + repeats x duration_s)
(repeats as asked: repeat-until-stable usually stops before its cap) and the typical_s of every reference tool the
run would plan (each tool's cost model sits beside its builder in reftools/). The kernel's own start and finish
(about 2 s a run on the 2026-11-28 guest: 67 s for a 64-s INT32 run) is left out, so that the typical time never
exceeds the cap. Its *cap* is what it may take at most: repeats at max_repeats, plus the reference allowance
(none where no tool applies). The cap is the base of the run's deadline and of the job-length limit; the typical
time is what a person is shown as the estimate, the cap beside it as a cap.

The reference plans are the runner's own (reftools/table.py), built from the job's parameters with sizes a kernel
would report (ESTIMATE_START) on a host of `cpus` CPUs and `mem_bytes` of RAM when known. Where a tool has an
alternative (`stream`, or hpcc's STREAM where it is missing: Debian packages only hpcc), the costlier is counted.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from .errors import ParamError
from .reftools.plan import Context, Plan

# What a memory kernel's start event says about its sizes, for planning before it ran: 128 MiB per buffer (4 x a
# 32 MiB L3), 16 M doubles per array. Only hpcc's STREAM N depends on them, and it is at least 8000 below 21 M.
ESTIMATE_START: Mapping[str, Any] = {"buffer_bytes": 1 << 27, "array_size": 1 << 24, "array_bytes": 1 << 27,
                                     "isa": "avx512", "stores": "auto"}
# A driving run's tools are its loopback run's, against the peer's servers: planned as the loopback ones.
PLAN_AS = {"network_drive": "network"}


def _kernel_params(kind: str, params: Mapping[str, Any]) -> dict[str, Any]:
    from .experiments import RUNS

    run = RUNS[kind]
    try:
        return run.kernel_params(dict(params))
    except (ParamError, KeyError, TypeError, ValueError):  # an estimate of a form still being filled in
        defaults = run.defaults()
        return {p.target: params.get(p.name, defaults.get(p.name)) for p in run.params}


def reference_plans(kind: str, params: Mapping[str, Any], cpus: int | None = None,
                    mem_bytes: int | None = None) -> list[Plan]:
    """The reference runs a run of this kind and these (job) params would plan; [] without `reference: true`."""
    from .reftools import table

    if params.get("reference") is not True:
        return []
    kind = PLAN_AS.get(kind, kind)
    kp = _kernel_params(kind, params)
    given = kp.get("threads")
    threads = [t for t in (given if isinstance(given, list) else [given]) if isinstance(t, int)]
    ctx = Context(experiment=kind, params=kp, start=ESTIMATE_START, cpus=cpus or max(threads or [1]),
                  mem_bytes=mem_bytes)
    plans, _ = table.plan(ctx)
    return [_costlier(p) for p in plans]


def _costlier(p: Plan) -> Plan:
    """The plan, or the one that runs in its place when its tool is missing, whichever costs more (and can run)."""
    alt = p.instead
    if alt is None or alt.unavailable is not None or alt.typical_s <= p.typical_s:
        return p
    return alt


def runs(plans: list[Plan]) -> list[Plan]:
    """The plans that start a tool (not a "none", not one that cannot run)."""
    return [p for p in plans if p.no_tool is None and p.unavailable is None]


def reference_typical(kind: str, params: Mapping[str, Any], cpus: int | None = None,
                      mem_bytes: int | None = None) -> float:
    return round(sum(p.typical_s for p in runs(reference_plans(kind, params, cpus, mem_bytes))), 1)


def host_facts(inventory: Mapping[str, Any] | None) -> dict[str, int | None]:
    """The CPUs (logical) and RAM an inventory reports, for reference_plans; None where it says nothing."""
    cpu = (inventory or {}).get("cpu") or {}
    cores = (cpu.get("sockets") or 1) * (cpu.get("cores_per_socket") or 0) * (cpu.get("threads_per_core") or 1)
    total = ((inventory or {}).get("memory") or {}).get("total_bytes")
    return {"cpus": int(cores) or None, "mem_bytes": total if isinstance(total, int) and total > 0 else None}


def run_typical(kind: str, params: Mapping[str, Any], inventory: Mapping[str, Any] | None = None) -> float | None:
    """A run's typical seconds (its experiment's typical_duration for its own params on its host); None for a run
    kind no experiment takes its params from (a serving run lasts as long as its driver). Remembered per (kind,
    params, CPUs, RAM): a page of runs (History) asks it for each, and planning a disk run's tools takes ~4 ms."""
    facts = host_facts(inventory)
    try:
        key = json.dumps(params, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return None
    return _run_typical(kind, key, facts["cpus"], facts["mem_bytes"])


@functools.lru_cache(maxsize=4096)
def _run_typical(kind: str, params_json: str, cpus: int | None, mem_bytes: int | None) -> float | None:
    from .experiments import EXPERIMENTS

    e = next((x for x in EXPERIMENTS.values() if x.params_of == kind), None)
    if e is None:
        return None
    try:
        return e.typical_duration(json.loads(params_json), cpus, mem_bytes)
    except (KeyError, TypeError, ValueError):  # a run stored before its experiment changed: no estimate
        return None
