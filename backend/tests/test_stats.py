import math

import pytest

from app.results.stats import outliers, summarize, t975


def test_summary_of_known_values():
    s = summarize([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])
    assert s.mean == 5.0
    assert math.isclose(s.stddev, math.sqrt(32 / 7))
    assert s.median == 4.5
    half = 2.365 * math.sqrt(32 / 7) / math.sqrt(8)
    assert math.isclose(s.ci95_low, 5.0 - half) and math.isclose(s.ci95_high, 5.0 + half)


def test_single_value_has_no_interval():
    s = summarize([3.0])
    assert (s.n, s.stddev, s.ci95_low, s.cv) == (1, 0.0, None, None)


def test_t_quantiles():
    assert t975(2) == 4.303
    assert t975(35) == 2.042  # conservative: df 30's quantile
    assert t975(1000) == 1.960
    with pytest.raises(ValueError):
        t975(0)


def test_outliers_are_marked_not_dropped():
    values = [10.0, 10.1, 9.9, 10.0, 3.0]
    assert outliers(values) == [4]
    assert summarize(values).n == 5
