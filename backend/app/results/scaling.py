"""Strong scaling: a fixed-work run (the cpu kernel's `work` > 0) does the same total work at every thread count, so
its time answers "how much faster with more threads". Each result row's extra `elapsed_s` is the mean over its
finished repeats of the slowest thread's time (a repeat the duration_s cap cut short has none, and its row is
invalid). Speedup S(n) = T(1) / T(n); parallel efficiency E(n) = T(1) / (n x T(n)) = S(n) / n, 1.0 being perfect.
Without a 1-thread row the smallest thread count b with a time is the baseline: S(n) = T(b) / T(n),
E(n) = b x T(b) / (n x T(n)). docs/methodology/cpu.md, "Strong scaling"."""
from collections.abc import Mapping, Sequence
from typing import Any

from app.results.schemas import ResultRow, ScalingPoint, StrongScaling


def strong_scaling(rows: Sequence[ResultRow], params: Mapping[str, Any]) -> list[StrongScaling]:
    work = params.get("work")
    if not isinstance(work, int) or isinstance(work, bool) or work <= 0:
        return []
    out: list[StrongScaling] = []
    for op in dict.fromkeys(r.op for r in rows):
        timed = sorted((r for r in rows if r.op == op and r.block_bytes is None and _seconds(r.extra.get("elapsed_s"))),
                       key=lambda r: r.threads)
        if not timed:
            continue
        base = next((r for r in timed if r.valid), timed[0])
        t_base, b = base.extra["elapsed_s"], base.threads
        points = []
        for r in timed:
            t = r.extra["elapsed_s"]
            speedup = t_base / t if r.threads >= b else None
            points.append(ScalingPoint(
                threads=r.threads, elapsed_s=t, elapsed_min_s=r.extra.get("elapsed_min_s"), speedup=speedup,
                efficiency=speedup * b / r.threads if speedup is not None else None, valid=r.valid))
        out.append(StrongScaling(op=op, work=work, baseline_threads=b, points=points))
    return out


def _seconds(value: Any) -> bool:
    """A time a row can be scaled by: a positive number (a row whose every repeat the cap cut short has none: null)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
