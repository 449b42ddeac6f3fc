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


def test_trace_summary_marks_a_sustained_drop_as_throttling():
    from app.results.service import trace_summary

    values = [100.0] * 120 + [80.0] * 60
    t = [float(i) for i in range(len(values))]
    s = trace_summary(t, values)
    assert (s.n, s.min, s.max) == (180, 80.0, 100.0)
    assert s.throttle is not None and s.throttle.at_s == 120.0 - 15 + 1  # window median flips mid-window
    assert abs(s.throttle.drop - 0.2) < 1e-9


def test_trace_summary_ignores_short_dips():
    from app.results.service import trace_summary

    values = [100.0] * 200
    values[100:110] = [50.0] * 10  # a 10-second dip is noise, not throttling
    s = trace_summary([float(i) for i in range(200)], values)
    assert s.throttle is None


def test_repeat_until_stable_records_what_ended_the_repeats():
    from app.results.service import compute_result

    def rows(values, target):
        res = [{"threads": 1, "repeat": i + 1, "value": v, "unit": "GFLOP/s", "verified": True} for i, v in enumerate(values)]
        return compute_result("cpu", {"op": "fp64", "stable_cv": target}, res, {}, {}).rows[0].stopped_by

    assert rows([100.0, 101.0, 100.5], 0.035) == "stable"
    assert rows([100.0, 60.0, 140.0], 0.035) == "max_repeats"
    assert rows([100.0, 60.0, 140.0], 0) is None


def test_multi_thread_peak_uses_the_clock_measured_on_every_cpu():
    from app.results.service import compute_result

    inventory = {"cpu": {"vendor": "AuthenticAMD", "family": 26, "model_number": 2, "sockets": 1,
                         "cores_per_socket": 2, "best_isa": "avx512"}}
    info = {"isa": "avx512", "clock_ghz": 4.0, "clock_ghz_all_cpus": 3.5}
    raw = [{"op": "fp64", "threads": t, "repeat": r, "value": 100.0, "unit": "GFLOP/s", "verified": True}
           for t in (1, 2) for r in (1, 2, 3)]
    rows = {row.threads: row for row in compute_result("cpu", {"op": "fp64"}, raw, info, inventory).rows}
    assert rows[1].peak is not None and rows[1].peak.value == pytest.approx(1 * 4.0 * 32)
    assert rows[2].peak is not None and rows[2].peak.value == pytest.approx(2 * 3.5 * 32)
    # a kernel that did not measure the all-CPU clock: the one-CPU clock, as before
    rows = {row.threads: row for row in compute_result("cpu", {"op": "fp64"}, raw, {"isa": "avx512", "clock_ghz": 4.0},
                                                       inventory).rows}
    assert rows[2].peak.value == pytest.approx(2 * 4.0 * 32)


def test_peak_uses_the_clock_after_the_phase_when_the_host_boosted_during_the_run():
    # the start measured 3.3 GHz, the core then ran at 3.6: 115 GFLOP/s on one Zen 5 core is possible
    # (32 FLOP/cycle x 3.6 GHz = 115.2), and must not be called "above the peak"
    from app.results.service import compute_result

    inventory = {"cpu": {"vendor": "AuthenticAMD", "family": 26, "model_number": 2, "sockets": 1,
                         "cores_per_socket": 2, "best_isa": "avx512"}}
    info = {"isa": "avx512", "clock_ghz": 3.3, "clock_ghz_all_cpus": 3.3}
    raw = [{"op": "fp64", "threads": 1, "repeat": r, "value": 113.0, "unit": "GFLOP/s", "verified": True,
            "clock_after_ghz": after} for r, after in ((1, 3.6), (2, 3.55), (3, 3.58))]
    row = compute_result("cpu", {"op": "fp64"}, raw, info, inventory).rows[0]
    assert row.peak.value == pytest.approx(32 * 3.6) and row.valid
    # without the after-phase clocks (an older kernel) the same figures are above the start's peak
    old = [{k: v for k, v in r.items() if k != "clock_after_ghz"} for r in raw]
    row = compute_result("cpu", {"op": "fp64"}, old, info, inventory).rows[0]
    assert row.peak.value == pytest.approx(32 * 3.3) and not row.valid and "above the theoretical peak" in row.invalid_reason
    # an after-clock lower than the start's does not lower the peak
    low = [dict(r, clock_after_ghz=3.0) for r in raw]
    assert compute_result("cpu", {"op": "fp64"}, low, info, inventory).rows[0].peak.value == pytest.approx(32 * 3.3)


def test_no_interval_below_zero_for_a_quantity_that_cannot_be_negative():
    from app.results.stats import summarize

    s = summarize([500.0, 23000.0, 1200.0])  # the Mbit/s spread: the t-interval would start at -1,360-ish
    assert s.ci95_low is None and s.ci95_high is None and s.stddev > 0
    ok = summarize([100.0, 101.0, 99.0])
    assert ok.ci95_low is not None and ok.ci95_low > 0
    signed = summarize([-5.0, 5.0, 1.0])  # a quantity that is negative itself keeps its interval
    assert signed.ci95_low is not None and signed.ci95_low < 0
