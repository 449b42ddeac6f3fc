"""Turn a run's per-repeat kernel results into the stored result: statistics, peak, efficiency, validity."""
from collections import defaultdict
from typing import Any

from app.hosts.peaks import cpu_peak
from app.hosts.schemas import Peak
from app.jobs.schemas import ReferenceFigure, ResultRow, RunResult, Throttle, TraceSummary
from app.results.limits import below_floor, other_peak
from app.results.stats import median, summarize

# A throttle is a sustained drop: the median of THROTTLE_WINDOW consecutive samples below
# (1 - THROTTLE_DROP) x the median of the trace's opening window.
THROTTLE_WINDOW = 30
THROTTLE_DROP = 0.10

# The CPU peak uses a clock measured once before the run; turbo can move a few percent during it.
# A figure more than this above the peak is flagged invalid (never clipped).
PEAK_TOLERANCE = 0.03


def unit_for(experiment: str, params: dict[str, Any]) -> str:
    """The unit a run's live samples and results are in, before any arrive (results carry their own)."""
    if experiment in ("cpu", "cpu_trace"):
        return "GIOP/s" if params.get("op") == "int32" else "GFLOP/s"
    if experiment == "memory":
        return "Mload/s" if params.get("op") == "latency" else "MB/s"
    if experiment in ("network", "network_drive", "network_serve"):
        return "RT/s" if str(params.get("op", "")).endswith("_rr") else "Mbit/s"
    return {"disk": "MB/s", "gpu": "mixed"}.get(experiment, "")


def _flatten(r: dict[str, Any]) -> dict[str, float]:
    """Numeric per-repeat figures, one nested level flattened: latency_us.p50 -> latency_p50_us."""
    out: dict[str, float] = {}
    for k, v in r.items():
        if isinstance(v, bool):
            continue
        if isinstance(v, int | float):
            out[k] = float(v)
        elif isinstance(v, dict):
            base, unit = (k[: -len(sfx)], sfx) if (sfx := next((x for x in ("_us", "_ms", "_ns") if k.endswith(x)), "")) \
                else (k, "")
            for sub, x in v.items():
                if isinstance(x, int | float) and not isinstance(x, bool):
                    out[f"{base}_{sub}{unit}"] = float(x)
    return out


STANDARD = {"threads", "repeat", "value", "unit", "verified", "op", "block_bytes", "type", "v", "t", "seconds", "work",
            "oversubscribed"}


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
        fig = ReferenceFigure(tool=ref["tool"], status=ref["status"], reason=ref.get("reason"), argv=ref.get("argv") or [])
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
    if cores is None:
        return Peak(value=o["value"], unit=o["unit"], formula="entered by a person for the whole host", source="user")
    used = min(threads, cores)
    return Peak(value=o["value"] * used / cores, unit=o["unit"],
                formula=f"{o['value']:g} {o['unit']} entered by a person for {cores} cores × {used}/{cores}",
                source="user")


def _stopped_by(params: dict[str, Any], cv: float | None) -> str | None:
    target = params.get("stable_cv") or 0
    if target <= 0:
        return None
    return "stable" if cv is not None and cv <= target else "max_repeats"


def run_clock_ghz(kernel_info: dict[str, Any], threads: int) -> float | None:
    """The clock the kernel measured under load: on one CPU for one thread; with every allowed CPU busy
    at once (clock_ghz_all_cpus, lower where turbo depends on how many cores are active) for more."""
    one, every = kernel_info.get("clock_ghz"), kernel_info.get("clock_ghz_all_cpus")
    if threads > 1 and isinstance(every, int | float) and every > 0:
        return float(every)
    return float(one) if isinstance(one, int | float) and one > 0 else None


def peak_clock_ghz(kernel_info: dict[str, Any], threads: int, reps: list[dict[str, Any]]) -> float | None:
    """The clock a CPU peak is computed at: the higher of the one measured before the run (run_clock_ghz) and
    those measured right after each phase (clock_after_ghz). The host's boost moves with its load, so the
    run may have had a higher clock than its start: a peak is never set below what the core ran at."""
    clocks = [run_clock_ghz(kernel_info, threads)]
    clocks += [float(r["clock_after_ghz"]) for r in reps if isinstance(r.get("clock_after_ghz"), int | float)]
    good = [c for c in clocks if c is not None and c > 0]
    return max(good) if good else None


def compute_result(
    experiment: str, params: dict[str, Any], raw_results: list[dict[str, Any]],
    kernel_info: dict[str, Any] | None, inventory: dict[str, Any],
    references: list[dict[str, Any]] | None = None, overrides: dict[str, Any] | None = None,
) -> RunResult:
    unit = unit_for(experiment, params)
    groups: dict[tuple[str | None, int, int | None], list[dict[str, Any]]] = defaultdict(list)
    for r in raw_results:
        key = (r.get("op") or params.get("op"), int(r["threads"]), r.get("block_bytes"))
        groups[key].append(r)
    info = kernel_info or {}
    rows: list[ResultRow] = []
    notes: set[str] = set()
    for (op, threads, block), reps in sorted(groups.items(), key=lambda kv: (str(kv[0][0]), kv[0][1], kv[0][2] or 0)):
        values = [float(r["value"]) for r in sorted(reps, key=lambda r: r.get("repeat", 0))]
        s = summarize(values)
        peak, why = (None, None)
        flat = [{k: v for k, v in _flatten(r).items() if k not in STANDARD} for r in reps]
        extra_keys = sorted({k for f in flat for k in f})
        extra = {k: sum(f[k] for f in flat if k in f) / sum(1 for f in flat if k in f) for k in extra_keys}
        row_unit = str(reps[0].get("unit") or unit)
        if experiment in ("cpu", "cpu_trace") and op:
            peak = overridden_peak(overrides or {}, f"cpu_{op}", threads, inventory)
            if peak is None:
                peak, why = cpu_peak(inventory, op, threads, info.get("isa"), peak_clock_ghz(info, threads, reps))
        else:
            peak, why = other_peak(experiment, op, row_unit, inventory, info, overrides or {})
        if why:
            notes.add(why)
        reasons = []
        if (floor := below_floor(experiment, extra, params)) is not None:
            reasons.append(floor)
        unverified = [r.get("repeat") for r in reps if not r.get("verified", False)]
        if unverified:
            reasons.append(f"verification failed in repeat(s) {unverified}: the kernel's result did not match its closed form")
        if peak is not None:
            limit = peak.value * (1 + PEAK_TOLERANCE)
            above = [(i + 1, v) for i, v in enumerate(values) if v > limit]
            if above:
                i, v = above[0]
                reasons.append(
                    f"repeat {i}: {v:.2f} {row_unit} is above the theoretical peak {peak.value:.2f} {peak.unit} "
                    f"(+{PEAK_TOLERANCE:.0%} clock tolerance); the peak or the measurement is wrong"
                )
        rows.append(
            ResultRow(
                op=op, threads=threads, block_bytes=block, unit=row_unit, n=s.n, mean=s.mean, stddev=s.stddev,
                min=s.min, max=s.max, median=s.median, ci95_low=s.ci95_low, ci95_high=s.ci95_high, cv=s.cv,
                values=values, outliers=s.outliers, extra=extra, peak=peak,
                references=match_references((op, threads, block), s.mean, row_unit, references or []),
                stopped_by=_stopped_by(params, s.cv),
                efficiency=(s.mean / peak.value) if peak else None,
                valid=not reasons, invalid_reason="; ".join(reasons) or None,
            )
        )
    return RunResult(unit=unit, rows=rows, peak_note="; ".join(sorted(notes)) or None)


def trace_summary(times: list[float], values: list[float]) -> TraceSummary | None:
    """min/mean/max of a per-second trace, and the first sustained drop (throttling), if any."""
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
    return TraceSummary(n=s.n, min=s.min, mean=s.mean, max=s.max, stddev=s.stddev, throttle=throttle)
