"""What a run's result looks like: the per-(op, threads) rows, the trace of a cpu_trace run, the verdicts.
Computed by app.results.service, stored with the run, shown in app.jobs.schemas.RunPublic."""
from typing import Any, Literal, get_args

from hostbench_common import resultfields
from pydantic import BaseModel, Field

from app.hosts.schemas import Peak
from app.results.stats import Summary
from app.results.verdict import Flag, Verdict


class ReferenceFigure(BaseModel):
    """A reference tool beside a row: its figure (ok), or why there is none: the tool is missing and the package
    that brings it (unavailable), it failed (failed), no tool measures this row (none). `note`: how the tool's
    run differs from the row (sockperf at its nearest size, STREAM from hpcc)."""

    tool: str
    status: Literal["ok", "unavailable", "failed", "none"]
    reason: str | None = None
    note: str | None = None
    metric: str | None = None
    value: float | None = None
    unit: str | None = None
    ratio: float | None = None  # ours / theirs, on the row's mean
    argv: list[str] = []


def _declared(key: str) -> dict[str, Any]:  # Field(json_schema_extra=_declared(key))
    """A stored figure made of the kernel's figure `key` (its lowest, its mean) lies in that figure's declared range
    (hostbench_common.resultfields): shown in the OpenAPI document, not checked again here (it was on upload, and a
    run stored before a range was declared must still be served)."""
    rng = resultfields.BOUNDS[key]
    out = {"minimum": rng.minimum, "exclusiveMinimum": rng.exclusive_minimum, "maximum": rng.maximum}
    return {k: v for k, v in out.items() if v is not None}


# The cache level a memory result's working set fits in, as the kernel labels it (hbk memory: result "level").
CacheLevel = Literal["L1", "L2", "L3", "DRAM"]
CACHE_LEVELS: tuple[str, ...] = get_args(CacheLevel)


class ResultRow(Summary):
    """One (op, threads, block) row: its repeats' statistics (n, mean, stddev, min, max, median, ci95_low,
    ci95_high, cv, outliers: app.results.stats.Summary, declared there once) and what the server made of them."""

    op: str | None
    threads: int
    block_bytes: int | None = None
    unit: str
    values: list[float]
    # Means over the repeats of the kernel's other per-repeat figures (iops, lat_p99_us, loss_pct, ...).
    extra: dict[str, float] = {}
    level: CacheLevel | None = None  # memory: the cache level the working set fits in
    # The unit of each of them as its kernel declares it (`hbk <kernel> --describe` "results", the describe
    # snapshot): "µs", "Mbit/s", "%", "B", "IOPS"; "" for none (a count, a ratio). A key the kernel does not declare
    # has no entry.
    extra_units: dict[str, str] = Field(default_factory=dict)
    # Those of them that are latencies, where lower is better (declared lower_is_better).
    extra_lower_is_better: list[str] = Field(default_factory=list)
    peak: Peak | None
    efficiency: float | None
    references: list[ReferenceFigure] = []
    # Repeat-until-stable: "stable" when the CV met the target, "max_repeats" when the cap ended it.
    stopped_by: Literal["stable", "max_repeats"] | None = None
    valid: bool  # false: the figure is wrong (above peak, below a floor, unverified, non-finite)
    invalid_reason: str | None
    # What the figure means, in one word (app/results/verdict.py), and every reason in words.
    verdict: Verdict = "valid"
    flags: list[Flag] = []


class Throttle(BaseModel):
    at_s: float  # seconds since the first sample
    baseline: float
    level: float  # median of the sustained window that fell below the threshold
    drop: float  # 1 - level / baseline


class TraceStretch(BaseModel):
    from_s: float  # seconds since the first sample
    to_s: float
    reference: float  # the trace's 90th percentile
    level: float  # median of the stretch
    cause: Literal["throttled", "cpu_lost", "unknown"]


class TraceSummary(BaseModel):
    n: int
    min: float
    mean: float
    max: float
    stddev: float
    throttle: Throttle | None
    stretches: list[TraceStretch] = []
    # the lowest of the phases' (one for a trace)
    cpu_share: float | None = Field(None, json_schema_extra=_declared("cpu_share"))
    flags: list[Flag] = []


SCALING_UNITS: dict[str, str] = {"elapsed_s": "s", "elapsed_min_s": "s", "speedup": "×", "efficiency": ""}


class ScalingPoint(BaseModel):
    threads: int
    # Mean over the row's finished repeats of the slowest thread's time to do its share (hbk result elapsed_s).
    elapsed_s: float = Field(json_schema_extra=_declared("elapsed_s"))
    # the same for the fastest thread: elapsed_s - elapsed_min_s is imbalance
    elapsed_min_s: float | None = Field(None, json_schema_extra=_declared("elapsed_min_s"))
    speedup: float | None  # T_base / T_n (T1 / Tn when the run has 1 thread); None without a baseline
    efficiency: float | None  # speedup x base / n: T1 / (n x Tn); 1.0 is perfect scaling
    valid: bool  # the row's verdict: false when a repeat was cut short, disturbed, unverified ...


class StrongScaling(BaseModel):
    """Strong scaling of one op of a fixed-work run (work > 0): the same total work at each thread count."""

    op: str | None
    work: int = Field(description="units of work per repeat over all threads (the kernel's unit, e.g. one step of "
                                  "every FMA chain)")
    baseline_threads: int = Field(description="the thread count speedups are relative to: 1 when the run has it, "
                                              "else its smallest")
    # elapsed "s"; speedup "×"; efficiency "" (a ratio, 1.0 = perfect), as the kernel's extra_units say a ratio
    units: dict[str, str] = Field(default_factory=lambda: dict(SCALING_UNITS))
    points: list[ScalingPoint]


class PairCheck(BaseModel):
    """How a network pair's two hosts compare (app/results/checks.py), stored with the driving run's result from
    the server's own records when it finished."""

    peer_host_id: int | None = None
    same_machine: bool
    why: str  # "the same running kernel (boot id)", "the same address 10.0.0.5", "different boot ids; ..."


class BusySummary(BaseModel):
    """What waiting for a quiet CPU and measuring disturbed phases again cost a run (its params quiet_wait_s,
    disturbed_retries; from the kernel's result lines: hostbench_common.verdicts.busy_summary)."""

    phases: int  # measured phases (result lines)
    waited_s: float  # seconds waited for a quiet CPU, all phases
    tries: int  # tries over all phases (phases when none was repeated)
    retried_phases: int  # phases measured more than once
    never_quiet: int  # phases whose wait ran out before the host was quiet


class RunHeadline(BaseModel):
    """The figure that sums a run up (History, CLI `runs`, report): the highest mean among its usable rows
    (verdict.usable: valid, or a loopback figure), or the trace mean of a clean trace; else no value and why."""

    value: float | None = None
    unit: str = ""
    threads: int | None = None
    op: str | None = None
    block_bytes: int | None = None
    left_out: int | None = None  # rows not usable (their verdicts), when a figure is given
    text: str  # "best 9,400 Mbit/s" / "mean 55.2 GFLOP/s" / "no valid row; 2 disturbed, 1 oversubscribed"


class RefusedRow(BaseModel):
    """A row the kernel did not run on this host, and why (its start event's `refused`): e.g. a memory latency
    working set that does not fit in the memory available at that thread count. The other rows ran."""

    op: str | None = None
    threads: int
    block_bytes: int | None = None
    reason: str


class RunResult(BaseModel):
    unit: str
    rows: list[ResultRow]
    # Rows the kernel did not run on this host, with its reason (None: every row ran, or a run stored before)
    refused: list[RefusedRow] | None = None
    peak_note: str | None = None
    trace: TraceSummary | None = None
    verdict: Verdict = "valid"  # the worst of the rows', the trace's and the run's own flags
    flags: list[Flag] = []  # the run's own (rows dropped as non-finite); rows and trace keep theirs
    # Memory runs: the host's detected cache sizes in bytes (its inventory: cpu0's L1d, L2, L3), which the
    # dashboard marks on a chart's block-size axis beside each row's level; None for other runs.
    caches: dict[Literal["L1d", "L2", "L3"], int] | None = None
    # Fixed-work (strong-scaling) runs: per op, elapsed time, speedup and parallel efficiency over thread counts
    # (app/results/scaling.py); None for fixed-duration runs (and results stored before it existed).
    scaling: list[StrongScaling] | None = None
    # What the verdict checked, in words: "valid" names only these (app/results/checks.checked_words).
    checked: list[str] | None = None  # None: a result stored before the verdict said so
    # Network pairs (the driving run): whether the serving host is another machine.
    pair: PairCheck | None = None
    headline: RunHeadline | None = None  # set with the verdict (results.service.with_verdict)
    busy: BusySummary | None = None  # None: the run asked neither to wait for a quiet CPU nor to repeat
