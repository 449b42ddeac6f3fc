"""Repeat statistics: the one module that turns repeats into mean ± stddev, CI and outlier marks."""
import math

from pydantic import BaseModel

# Two-sided 95 % Student t quantiles t_{0.975, df}.
_T975 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
    11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
    20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048,
    29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980,
}


def t975(df: int) -> float:
    if df < 1:
        raise ValueError("degrees of freedom must be >= 1")
    if df in _T975:
        return _T975[df]
    if df > 120:
        return 1.960
    # Conservative: the quantile of the next smaller tabulated df.
    return _T975[max(k for k in _T975 if k <= df)]


class Summary(BaseModel):
    """The statistics of one row's repeats: declared here once; app.results.schemas.ResultRow extends it."""

    n: int
    mean: float
    stddev: float
    min: float
    max: float
    median: float
    ci95_low: float | None
    ci95_high: float | None
    cv: float | None
    outliers: list[int]


def median(xs: list[float]) -> float:
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def summarize(values: list[float]) -> Summary:
    if not values:
        raise ValueError("no values to summarize")
    n = len(values)
    mean = math.fsum(values) / n
    stddev = math.sqrt(math.fsum((x - mean) ** 2 for x in values) / (n - 1)) if n > 1 else 0.0
    lo: float | None
    hi: float | None
    if n > 1:
        half = t975(n - 1) * stddev / math.sqrt(n)
        lo, hi = mean - half, mean + half
        if lo < 0 <= min(values):
            # A rate, a latency or a count cannot be negative: a t-interval reaching below zero says the
            # spread is too wide for the interval to mean anything. No interval then (the UI says why).
            lo = hi = None
    else:
        lo = hi = None
    cv = stddev / mean if n > 1 and mean != 0 else None
    return Summary(n=n, mean=mean, stddev=stddev, min=min(values), max=max(values), median=median(values),
                   ci95_low=lo, ci95_high=hi, cv=cv, outliers=outliers(values))


def outliers(values: list[float]) -> list[int]:
    """Indices outside Tukey's fences (1.5 IQR). Marked, never dropped. Needs at least 4 values."""
    if len(values) < 4:
        return []
    s = sorted(values)
    q1, q3 = _quantile(s, 0.25), _quantile(s, 0.75)
    iqr = q3 - q1
    lo, hi = q1 - 1.5 * iqr, q3 + 1.5 * iqr
    return [i for i, x in enumerate(values) if x < lo or x > hi]


def _quantile(sorted_xs: list[float], q: float) -> float:
    pos = (len(sorted_xs) - 1) * q
    lo = math.floor(pos)
    hi = math.ceil(pos)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)
