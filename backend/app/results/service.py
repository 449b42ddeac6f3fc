"""Turn a run's per-repeat kernel results into the stored result: statistics, peak, efficiency, validity."""
import math
from collections import defaultdict
from functools import cache
from typing import Any, Literal

from hostbench_common.describe import DESCRIBE
from hostbench_common.verdicts import busy_summary

from app.experiments.registry import ROLE_OF, RUNS
from app.hosts.peaks import cpu_peak, peak_clock_ghz, readable_inventory
from app.hosts.schemas import Peak
from app.results.checks import (
    checked_words,
    declared_checks,
    disk_flags,
    io_mode,
    net_flags,
    pair_flags,
    spread_flags,
)
from app.results.limits import FLOORS, below_floor, other_peak
from app.results.scaling import strong_scaling
from app.results.schemas import (
    CACHE_LEVELS,
    BusySummary,
    PairCheck,
    ReferenceFigure,
    RefusedRow,
    ResultRow,
    RunHeadline,
    RunResult,
    Throttle,
    TraceStretch,
    TraceSummary,
)
from app.results.stats import median, summarize
from app.results.verdict import (
    DISTURBED_SHARE,
    Flag,
    allowed_cpus,
    cpu_quota,
    flag,
    non_finite_repeats,
    none_usable,
    share_flags,
    usable,
    verdict_of,
)

# A throttle is a sustained drop: the median of THROTTLE_WINDOW consecutive samples below
# (1 - THROTTLE_DROP) x the median of the trace's opening window.
THROTTLE_WINDOW = 30
THROTTLE_DROP = 0.10

# The CPU peak uses a clock measured once before the run; turbo can move a few percent during it.
# A figure more than this above the peak is flagged invalid (never clipped).
PEAK_TOLERANCE = 0.03


def unit_for(experiment: str, params: dict[str, Any]) -> str:
    """The unit a run's live samples and results are in, before any arrive (results carry their own)."""
    run = RUNS.get(experiment)
    return run.unit_for(params) if run is not None else ""


def _flat_key(key: str, sub: str) -> str:
    """The name of a nested figure once flattened: latency_us.p50 -> latency_p50_us, plan.grid -> plan_grid."""
    sfx = next((x for x in ("_us", "_ms", "_ns") if key.endswith(x)), "")
    return f"{key[: -len(sfx)]}_{sub}{sfx}" if sfx else f"{key}_{sub}"


def _flatten(r: dict[str, Any]) -> dict[str, float]:
    """Numeric per-repeat figures, one nested level flattened: latency_us.p50 -> latency_p50_us."""
    out: dict[str, float] = {}
    for k, v in r.items():
        if isinstance(v, bool):
            continue
        if isinstance(v, int | float):
            out[k] = float(v)
        elif isinstance(v, dict):
            for sub, x in v.items():
                if isinstance(x, int | float) and not isinstance(x, bool):
                    out[_flat_key(k, sub)] = float(x)
    return out


@cache
def declared_figures(experiment: str) -> dict[str, tuple[str, bool]]:
    """(unit, lower_is_better) of each numeric figure the run kind's kernel declares for its result lines
    (`hbk <kernel> --describe` "results", from the describe snapshot), under the name _flatten gives it: an
    object's members as latency_p50_us. Empty for a kind the table does not know."""
    run = RUNS.get(experiment)
    declared: dict[str, Any] = DESCRIBE.get(run.kernel, {}).get("results", {}) if run is not None else {}
    out: dict[str, tuple[str, bool]] = {}
    for key, d in declared.items():
        if d.get("type") in ("number", "integer"):
            out[key] = (str(d.get("unit", "")), bool(d.get("lower_is_better")))
        elif d.get("type") == "object":
            for sub, f in (d.get("fields") or {}).items():
                if f.get("type") in ("number", "integer"):
                    out[_flat_key(key, sub)] = (str(f.get("unit", "")), bool(f.get("lower_is_better")))
    return out


def with_units(row: ResultRow, experiment: str) -> ResultRow:
    """The row's extra figures' units and which are latencies, as the kernel declares them."""
    declared = declared_figures(experiment)
    row.extra_units = {k: declared[k][0] for k in row.extra if k in declared}
    row.extra_lower_is_better = sorted(k for k in row.extra if k in declared and declared[k][1])
    return row


STANDARD = {"threads", "repeat", "value", "unit", "verified", "op", "block_bytes", "type", "v", "t", "seconds", "work",
            "oversubscribed", "sampler"}


def _normalise_unit(u: str | None) -> str:
    return (u or "").lower().replace("flops", "flop/s").replace(" ", "")


def match_references(row_key: tuple[str | None, int, int | None], mean: float, unit: str,
                     references: list[dict[str, Any]]) -> list[ReferenceFigure]:
    """The reference figures run for this (op, threads, block): the first metric in the row's unit, and ours/theirs."""
    op, threads, block = row_key
    out = []
    for ref in references:
        m = ref.get("matches") or {}
        if m.get("op") not in (None, op) or m.get("threads") not in (None, threads) \
                or m.get("block_bytes") not in (None, block):
            continue
        fig = ReferenceFigure(tool=ref["tool"], status=ref["status"], reason=ref.get("reason"), note=ref.get("note"),
                              argv=ref.get("argv") or [])
        if ref["status"] == "ok":
            metric = next((x for x in ref.get("metrics") or []
                           if _normalise_unit(x.get("unit")) == _normalise_unit(unit)
                           and isinstance(x.get("value"), int | float) and x.get("valid", True) is not False), None)
            if metric is None:
                fig.status, fig.reason = "failed", f"{ref['tool']} reported no figure in {unit}"
            else:
                fig.metric, fig.value, fig.unit = metric["name"], float(metric["value"]), metric.get("unit")
                fig.ratio = mean / fig.value if fig.value else None
        out.append(fig)
    return out


def overridden_peak(overrides: dict[str, Any], key: str, threads: int, inventory: dict[str, Any]) -> Peak | None:
    o = overrides.get(key)
    if not o:
        return None
    cpu = inventory.get("cpu") or {}
    cores = (cpu.get("sockets") or 1) * (cpu.get("cores_per_socket") or 0) or None
    who = o.get("by") or "a person"
    when = f" on {o['at'][:16].replace('T', ' ')} UTC" if o.get("at") else ""
    if cores is None:
        return Peak(value=o["value"], unit=o["unit"], formula=f"entered by {who}{when} for the whole host",
                    source="user", since=o.get("at"))
    used = min(threads, cores)
    return Peak(value=o["value"] * used / cores, unit=o["unit"], since=o.get("at"),
                formula=f"{o['value']:g} {o['unit']} entered by {who}{when} for {cores} cores × {used}/{cores}",
                source="user")


def _stopped_by(params: dict[str, Any], cv: float | None) -> Literal["stable", "max_repeats"] | None:
    target = params.get("stable_cv") or 0
    if target <= 0:
        return None
    return "stable" if cv is not None and cv <= target else "max_repeats"


def compute_result(
    experiment: str, params: dict[str, Any], raw_results: list[dict[str, Any]],
    kernel_info: dict[str, Any] | None, inventory: dict[str, Any],
    references: list[dict[str, Any]] | None = None, overrides: dict[str, Any] | None = None,
    pair: PairCheck | None = None,
) -> RunResult:
    unit = unit_for(experiment, params)
    kind = RUNS.get(experiment)
    cpu_peaks = kind is not None and kind.peak == "cpu"
    checks = declared_checks(experiment)  # what the kernel's --describe names, beyond what every run gets
    # a server waits for its peer: its CPU share says nothing; threads that sleep by design are not "disturbed"
    share_judged = ROLE_OF.get(experiment) != "serve"
    sleeps = kind is not None and not kind.judged_by_cpu_share(params)
    groups: dict[tuple[str | None, int, int | None], list[dict[str, Any]]] = defaultdict(list)
    for r in raw_results:
        key = (r.get("op") or params.get("op"), int(r["threads"]), r.get("block_bytes"))
        groups[key].append(r)
    info = kernel_info or {}
    # a run that named its ISA is set against that ISA's peak, not the widest the CPU has
    asked = params.get("isa")
    isa = asked if isinstance(asked, str) and asked != "auto" else info.get("isa")
    inventory = readable_inventory(inventory)
    cpus = allowed_cpus(info, inventory)
    rows: list[ResultRow] = []
    notes: set[str] = set()
    run_flags: list[Flag] = pair_flags(pair)
    peak_known = False
    for (op, threads, block), all_reps in sorted(groups.items(),
                                                 key=lambda kv: (str(kv[0][0]), kv[0][1], kv[0][2] or 0)):
        bad = non_finite_repeats(all_reps)
        reps = [r for r in all_reps if int(r.get("repeat") or 0) not in bad]
        where = f"{op or experiment}, {threads} thread{'s' if threads != 1 else ''}" + (
            f", {block} B blocks" if block else "")
        if not reps:
            run_flags.append(flag("non_finite", f"{where}: every repeat reported a non-finite value (NaN or "
                                                f"infinity); the kernel's arithmetic or its timer failed"))
            continue
        values = [float(r["value"]) for r in sorted(reps, key=lambda r: r.get("repeat", 0))]
        s = summarize(values)
        peak, why = (None, None)
        flat = [{k: v for k, v in _flatten(r).items() if k not in STANDARD and math.isfinite(v)} for r in reps]
        extra_keys = sorted({k for f in flat for k in f})
        extra = {k: sum(f[k] for f in flat if k in f) / sum(1 for f in flat if k in f) for k in extra_keys}
        row_unit = str(reps[0].get("unit") or unit)
        if cpu_peaks and op:
            peak = overridden_peak(overrides or {}, f"cpu_{op}", threads, inventory)
            if peak is None:
                peak, why = cpu_peak(inventory, op, threads, isa, peak_clock_ghz(info, threads, reps))
        else:
            peak, why = other_peak(experiment, op, row_unit, inventory, info, overrides or {})
        if why:
            notes.add(why)
        flags: list[Flag] = []
        if bad:
            flags.append(flag("non_finite", f"repeat(s) {bad} reported a non-finite value (NaN or infinity): the "
                                            "kernel's arithmetic or its timer failed; the statistics use the rest"))
        direct = io_mode(info, params, reps) == "direct" if "storage" in checks else None
        if (floor := below_floor(extra, params, direct)) is not None:
            flags.append(flag("below_floor", floor))
        unfinished = [r.get("repeat") for r in reps if str(r.get("reason") or "").startswith("unfinished")]
        if unfinished:
            flags.append(flag("unverified", f"repeat(s) {unfinished} did not finish their fixed work (work "
                                            f"{params.get('work')}) within the duration_s cap: no elapsed time; "
                                            "raise duration_s or lower work"))
        unverified = [r.get("repeat") for r in reps
                      if not r.get("verified", False) and r.get("repeat") not in unfinished]
        if unverified:
            flags.append(flag("unverified", f"verification failed in repeat(s) {unverified}: the kernel's result "
                                            "did not match its closed form"))
        if peak is not None:
            limit = peak.value * (1 + PEAK_TOLERANCE)
            above = [(i + 1, v) for i, v in enumerate(values) if v > limit]
            if above:
                i, v = above[0]
                flags.append(flag("above_peak",
                    f"repeat {i}: {v:.2f} {row_unit} is above the theoretical peak {peak.value:.2f} {peak.unit} "
                    f"(+{PEAK_TOLERANCE:.0%} clock tolerance); the peak or the measurement is wrong", v))
        if share_judged:
            flags += share_flags(threads, all_reps, cpus, judge_share=not sleeps, quota=cpu_quota(info))
        flags += spread_flags(values, s.cv, params)
        if "network" in checks:
            flags += net_flags(experiment, op, reps, pair)
        if "storage" in checks:
            flags += disk_flags(op, info, params, reps, extra, values, row_unit,
                                peak is not None and peak.source == "user")
        peak_known = peak_known or peak is not None
        reasons = [f.text for f in flags if f.severity == "invalid"]
        rows.append(with_units(
            ResultRow(
                op=op, threads=threads, block_bytes=block, unit=row_unit, n=s.n, mean=s.mean, stddev=s.stddev,
                min=s.min, max=s.max, median=s.median, ci95_low=s.ci95_low, ci95_high=s.ci95_high, cv=s.cv,
                values=values, outliers=s.outliers, extra=extra, peak=peak,
                level=next((r["level"] for r in reps if r.get("level") in CACHE_LEVELS), None),
                references=match_references((op, threads, block), s.mean, row_unit, references or []),
                stopped_by=_stopped_by(params, s.cv),
                efficiency=(s.mean / peak.value) if peak else None,
                valid=not reasons, invalid_reason="; ".join(reasons) or None,
                verdict=verdict_of(flags), flags=flags,
            ), experiment,
        ))
    checked = checked_words(experiment, params, raw_results, judge_share=not sleeps, share_judged=share_judged,
                            peak_known=peak_known, pair=pair, kernel_info=info,
                            floored=any(key in FLOORS for key in declared_figures(experiment)))
    result = RunResult(unit=unit, rows=rows, refused=refused_rows(info) or None,
                       peak_note="; ".join(sorted(notes)) or None, flags=run_flags,
                       checked=checked, pair=pair,
                       busy=BusySummary.model_validate(busy) if (busy := busy_summary(raw_results)) else None,
                       caches=detected_caches(inventory) if "cache_levels" in checks else None,
                       scaling=(strong_scaling(rows, params) or None) if "strong_scaling" in checks else None)
    return with_verdict(result)


def refused_rows(kernel_info: dict[str, Any]) -> list[RefusedRow]:
    """The rows the kernel refused on this host (its start event's `refused`), each with its reason; an entry
    that is not well formed is left out."""
    out: list[RefusedRow] = []
    for x in kernel_info.get("refused") or []:
        if isinstance(x, dict) and isinstance(x.get("threads"), int) and isinstance(x.get("reason"), str):
            op, block = x.get("op"), x.get("block_bytes")
            out.append(RefusedRow(op=op if isinstance(op, str) else None, threads=x["threads"],
                                  block_bytes=block if isinstance(block, int) else None, reason=x["reason"]))
    return out


def detected_caches(inventory: dict[str, Any]) -> dict[Literal["L1d", "L2", "L3"], int]:
    """The cache sizes the host's inventory states (a readable_inventory), by level."""
    cpu = inventory.get("cpu", {})
    named: tuple[tuple[Literal["L1d", "L2", "L3"], str], ...] = (("L1d", "l1d_bytes"), ("L2", "l2_bytes"),
                                                                  ("L3", "l3_bytes"))
    return {level: cpu[key] for level, key in named if key in cpu}


def with_verdict(result: RunResult) -> RunResult:
    """The run's verdict: the worst of its rows', its trace's and its own flags."""
    every = [f for row in result.rows for f in row.flags] + list(result.flags)
    if result.trace is not None:
        every += result.trace.flags
    result.verdict = verdict_of(every) if (result.rows or result.flags) else "invalid"
    result.headline = headline_of(result)
    return result


def _short(v: float) -> str:
    a = abs(v)
    return f"{v:,.0f}" if a >= 1000 else f"{v:.1f}" if a >= 100 else f"{v:.2f}" if a >= 1 else f"{v:.3g}"


def headline_of(result: RunResult) -> RunHeadline:
    """The figure that sums a run up, from usable rows only (verdict.usable); else no value, and why."""
    if result.trace is not None:
        trace_verdict = verdict_of(result.trace.flags + [f for r in result.rows for f in r.flags])
        if usable(trace_verdict):
            return RunHeadline(value=result.trace.mean, unit=result.unit,
                               text=f"mean {_short(result.trace.mean)} {result.unit}".strip())
        return RunHeadline(unit=result.unit, text=none_usable([trace_verdict], "trace"))
    ok = [r for r in result.rows if usable(r.verdict)]
    if not ok:
        return RunHeadline(unit=result.unit, text=none_usable([r.verdict for r in result.rows] or [result.verdict],
                                                               "row"))
    best = max(ok, key=lambda r: r.mean)
    left = len([r for r in result.rows if not usable(r.verdict)])
    note = f" ({left} row{'s' if left != 1 else ''} left out: not valid)" if left else ""
    return RunHeadline(value=best.mean, unit=best.unit, threads=best.threads, op=best.op, block_bytes=best.block_bytes,
                       left_out=left, text=f"best {_short(best.mean)} {best.unit}{note}")


# Stretches of a trace: a rolling median of STRETCH_WINDOW samples below (1 - THROTTLE_DROP) x the trace's
# 90th percentile, lasting at least STRETCH_MIN_S seconds.
STRETCH_WINDOW = 5
STRETCH_MIN_S = 5.0


def _percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]


def trace_stretches(times: list[float], values: list[float], cpu_share: float | None) -> list[TraceStretch]:
    """Where the trace's rate fell, and why. The rate is clock x the share of the CPU the kernel's threads
    had; the samples do not carry their own CPU share, so the cause comes from the phase's: the work lost
    in the dips (sum of (1 - rate / reference) x interval) is set against the CPU time the kernel lost
    ((1 - share) x duration). When the lost CPU time accounts for at least half of the lost work, the
    stretches are `cpu_lost` (other processes or the hypervisor ran there); when the kernel kept at least
    DISTURBED_SHARE of its CPU, they are `throttled` (the clock fell); else `unknown`."""
    if len(values) < STRETCH_WINDOW * 2:
        return []
    reference = _percentile(values, 0.9)
    if reference <= 0:
        return []
    half = STRETCH_WINDOW // 2
    low = [median(values[max(0, i - half):i + half + 1]) < (1 - THROTTLE_DROP) * reference for i in range(len(values))]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(values):
        if low[i]:
            j = i
            while j + 1 < len(values) and low[j + 1]:
                j += 1
            if times[j] - times[i] + 1 >= STRETCH_MIN_S:
                spans.append((i, j))
            i = j + 1
        else:
            i += 1
    if not spans:
        return []
    dt = (times[-1] - times[0]) / max(1, len(times) - 1) or 1.0
    lost_work_s = sum(max(0.0, 1 - v / reference) * dt for a, b in spans for v in values[a:b + 1])
    duration = times[-1] - times[0] + dt
    if cpu_share is None:
        cause = "unknown"
    elif cpu_share >= DISTURBED_SHARE:
        cause = "throttled"
    elif (1 - cpu_share) * duration >= 0.5 * lost_work_s:
        cause = "cpu_lost"
    else:
        cause = "unknown"
    return [TraceStretch(from_s=times[a] - times[0], to_s=times[b] - times[0] + dt, reference=reference,
                         level=median(values[a:b + 1]), cause=cause) for a, b in spans]  # type: ignore[arg-type]


def trace_flags(stretches: list[TraceStretch], cpu_share: float | None) -> list[Flag]:
    out: list[Flag] = []
    lost = [s for s in stretches if s.cause == "cpu_lost"]
    fell = [s for s in stretches if s.cause == "throttled"]
    unknown = [s for s in stretches if s.cause == "unknown"]

    def spans(ss: list[TraceStretch]) -> str:
        shown = ", ".join(f"{s.from_s:.0f}–{s.to_s:.0f} s" for s in ss[:4])
        return shown + (f" and {len(ss) - 4} more" if len(ss) > 4 else "")

    if lost:
        out.append(flag("cpu_lost", f"the kernel lost its CPU at {spans(lost)} (CPU share over the trace "
                                    f"{cpu_share:.2f}): other processes or the hypervisor ran there; not throttling",
                        cpu_share))
    if fell:
        out.append(flag("throttled", f"the clock fell at {spans(fell)} while the kernel kept its CPU "
                                     f"(share {cpu_share:.2f}): throttling", min(s.level / s.reference for s in fell)))
    if unknown:
        why = "the kernel reported no CPU share" if cpu_share is None else \
            f"the CPU share over the trace ({cpu_share:.2f}) explains only part of it"
        out.append(flag("throttled", f"the rate fell at {spans(unknown)}; {why}, so throttling cannot be told "
                                     "apart from lost CPU time", min(s.level / s.reference for s in unknown)))
    return out


def trace_summary(times: list[float], values: list[float], cpu_share: float | None = None) -> TraceSummary | None:
    """min/mean/max of a per-second trace, the first sustained drop (throttle, kept for older readers), and
    every stretch where the rate fell, with its cause (trace_stretches)."""
    if not values:
        return None
    s = summarize(values)
    throttle = None
    opening = max(THROTTLE_WINDOW, len(values) // 10)
    if len(values) >= opening + THROTTLE_WINDOW:
        baseline = median(values[:opening])
        for i in range(opening, len(values) - THROTTLE_WINDOW + 1):
            level = median(values[i:i + THROTTLE_WINDOW])
            if level < (1 - THROTTLE_DROP) * baseline:
                throttle = Throttle(at_s=times[i] - times[0], baseline=baseline, level=level,
                                    drop=1 - level / baseline)
                break
    stretches = trace_stretches(times, values, cpu_share)
    return TraceSummary(n=s.n, min=s.min, mean=s.mean, max=s.max, stddev=s.stddev, throttle=throttle,
                        stretches=stretches, cpu_share=cpu_share, flags=trace_flags(stretches, cpu_share))


def current_result(run: Any, overrides: dict[str, Any] | None,
                   host_inventory: dict[str, Any] | None) -> RunResult | None:
    """A stored run's result as the host's peaks stand now: recomputed from its raw results, so a peak
    entered by hand (or a table that learned the CPU) reaches earlier runs; the trace summary is the one
    stored at the end of the run (it needs the samples). A result that cannot be recomputed is shown as
    stored, its verdict derived again from its rows."""
    if not run.result:
        return None
    stored = RunResult.model_validate(run.result)
    for row in stored.rows:  # stored before the units were part of a row: they are the kernel's, as declared now
        if not row.extra_units:
            with_units(row, run.experiment)
    if not run.raw_results:
        return with_verdict(stored)
    try:
        fresh = compute_result(run.experiment, run.params, run.raw_results, run.kernel_info,
                               run.inventory_snapshot or host_inventory or {}, run.references, overrides,
                               stored.pair)
    except (KeyError, TypeError, ValueError):  # raw results from an older protocol: keep what was stored
        return with_verdict(stored)
    fresh.trace = stored.trace
    return with_verdict(fresh)


def phase_cpu_share(raw_results: list[dict[str, Any]]) -> float | None:
    """The lowest CPU share of a run's phases (a trace has one), relative to what its threads could have had."""
    shares = [float(r["cpu_share"]) for r in raw_results
              if isinstance(r.get("cpu_share"), int | float) and not isinstance(r.get("cpu_share"), bool)
              and math.isfinite(r["cpu_share"])]
    return min(shares) if shares else None
