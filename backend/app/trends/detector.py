"""The regression detector: where a metric's series of run means moved, and which way (docs/methodology/trends.md).

Method: a sliding two-sample Mann-Whitney U test (exact, two-sided) between the current regime's trailing baseline
(up to BASELINE_MAX points, at least BASELINE_MIN) and the newest TEST_WINDOW points, with a minimum relative effect
(the medians differ by at least MIN_EFFECT). The series is walked in order as points arrive; a change is declared at
the first point of the test window the first time both hold, and the baseline then starts again there, so one step
is flagged once. Ranks make it blind to how far an outlier lies (a noisy VM's occasional 40 % dip counts as one low
rank, not as a shifted mean), and the effect floor keeps a real but negligible shift (a 1 % drift on a quiet box)
from paging anyone.

Pure Python, no dependency: the exact null distribution of U for the window sizes used here is a small table.
Whether a change is a regression or an improvement comes from the figure's direction (its kernel declares
lower_is_better, `app.results.service.declared_figures`), never from here.
"""
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from math import comb

# The defaults, chosen by app.trends.evaluate's counts (docs/methodology/trends.md has the table they gave).
BASELINE_MIN = 8
BASELINE_MAX = 20
TEST_WINDOW = 8
ALPHA = 0.002
MIN_EFFECT = 0.03


@dataclass(frozen=True)
class Params:
    baseline_min: int = BASELINE_MIN
    baseline_max: int = BASELINE_MAX
    test_window: int = TEST_WINDOW
    alpha: float = ALPHA
    min_effect: float = MIN_EFFECT


@dataclass(frozen=True)
class Change:
    index: int  # the first point of the new regime (an index into the values given)
    detected_at: int  # the point whose arrival made it significant (index + test_window - 1)
    before: float  # the baseline's median
    after: float  # the test window's median
    effect: float  # after / before - 1
    p_value: float


@cache
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """How many of the C(m+n, m) orderings of two samples (sizes m, n, no ties) give each U = 0..m*n."""
    if m == 0 or n == 0:
        return (1,)
    a = _u_counts(m - 1, n)  # the largest value is in the first sample: it beats all n of the second
    b = _u_counts(m, n - 1)  # it is in the second sample: adds nothing to U
    out = [0] * (m * n + 1)
    for u, c in enumerate(a):
        out[u + n] += c
    for u, c in enumerate(b):
        out[u] += c
    return tuple(out)


def mann_whitney_p(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided exact p-value of the Mann-Whitney U test (ties count one half; the null table assumes none,
    which is exact for measured floats and slightly conservative with ties)."""
    m, n = len(x), len(y)
    if m == 0 or n == 0:
        return 1.0
    u = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in x for b in y)
    counts = _u_counts(m, n)
    total = comb(m + n, m)
    lo = min(u, m * n - u)
    tail = sum(counts[: int(lo) + 1])  # P(U <= lo); U's null distribution is symmetric
    return min(1.0, 2 * tail / total)


def median(values: Sequence[float]) -> float:
    s = sorted(values)
    k = len(s) // 2
    return s[k] if len(s) % 2 else (s[k - 1] + s[k]) / 2


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile, linear between the two nearest order statistics (NumPy's default method)."""
    v = sorted(values)
    at = q * (len(v) - 1)
    lo = int(at)
    return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (at - lo)


def detect(values: Sequence[float], p: Params | None = None) -> list[Change]:
    """Every change in a series of (valid) points, in order."""
    p = p or Params()
    changes: list[Change] = []
    start = 0  # the first point of the current regime
    w = p.test_window
    for t in range(len(values)):
        first = t - w + 1  # the test window is values[first..t]
        if first - start < p.baseline_min:
            continue
        base = values[max(start, first - p.baseline_max):first]
        test = values[first:t + 1]
        before, after = median(base), median(test)
        if before <= 0:
            continue
        effect = after / before - 1
        if abs(effect) < p.min_effect:
            continue
        pv = mann_whitney_p(base, test)
        if pv <= p.alpha:
            changes.append(Change(index=first, detected_at=t, before=before, after=after, effect=effect, p_value=pv))
            start = first
    return changes
