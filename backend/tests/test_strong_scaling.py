"""Strong scaling (cpu runs with work > 0): the result gives, per op, each thread count's elapsed time, speedup
T1/Tn and parallel efficiency T1/(n x Tn) with their units; a repeat the duration_s cap cut short makes its row
invalid with a reason that says so; fixed-duration runs have no scaling."""
import pytest

from app.results.service import compute_result


def _rep(threads: int, repeat: int, elapsed: float | None, work: int = 1_000_000, **kw: object) -> dict:
    rate = work * 256 / elapsed * 1e-9 if elapsed else 1.0
    r = {"type": "result", "threads": threads, "repeat": repeat, "value": rate, "unit": "GFLOP/s", "op": "fp64",
         "work": work if elapsed else work // 2, "seconds": elapsed or 5.0, "verified": elapsed is not None,
         "cpu_share": 1.0, "preemptions": 0, "work_target": work, "elapsed_s": elapsed,
         "elapsed_min_s": elapsed * 0.99 if elapsed else None, "oversubscribed": False}
    if elapsed is None:
        r["reason"] = "unfinished: 500000 of 1000000 units of work when the duration_s cap (5 s) ran out; ..."
    return {**r, **kw}


def test_speedup_and_efficiency_are_t1_over_tn_per_thread_count() -> None:
    reps = [_rep(1, 1, 8.0), _rep(1, 2, 8.2), _rep(2, 1, 4.1), _rep(2, 2, 4.3), _rep(4, 1, 2.5), _rep(4, 2, 2.5)]
    res = compute_result("cpu", {"op": "fp64", "threads": [1, 2, 4], "work": 1_000_000}, reps, {}, {})
    assert res.scaling is not None and len(res.scaling) == 1
    s = res.scaling[0]
    assert (s.op, s.work, s.baseline_threads) == ("fp64", 1_000_000, 1)
    assert s.units == {"elapsed_s": "s", "elapsed_min_s": "s", "speedup": "×", "efficiency": ""}
    by = {p.threads: p for p in s.points}
    assert by[1].elapsed_s == pytest.approx(8.1) and by[1].speedup == pytest.approx(1.0)
    assert by[2].elapsed_s == pytest.approx(4.2) and by[2].speedup == pytest.approx(8.1 / 4.2)
    assert by[2].efficiency == pytest.approx(8.1 / (2 * 4.2))
    assert by[4].speedup == pytest.approx(8.1 / 2.5) and by[4].efficiency == pytest.approx(8.1 / (4 * 2.5))
    assert by[4].elapsed_min_s == pytest.approx(2.5 * 0.99)
    row = next(r for r in res.rows if r.threads == 2)
    assert row.extra_units["elapsed_s"] == "s"


def test_without_one_thread_the_smallest_count_is_the_baseline() -> None:
    reps = [_rep(2, 1, 4.0), _rep(4, 1, 2.5)]
    scaling = compute_result("cpu", {"op": "fp64", "threads": [2, 4], "work": 1_000_000}, reps, {}, {}).scaling
    assert scaling is not None
    s = scaling[0]
    assert s.baseline_threads == 2
    four = s.points[1]
    assert four.speedup == pytest.approx(4.0 / 2.5) and four.efficiency == pytest.approx(2 * 4.0 / (4 * 2.5))


def test_a_repeat_cut_short_by_the_cap_is_invalid_and_says_why() -> None:
    reps = [_rep(1, 1, None), _rep(2, 1, 4.0)]
    res = compute_result("cpu", {"op": "fp64", "threads": [1, 2], "work": 1_000_000}, reps, {}, {})
    one = next(r for r in res.rows if r.threads == 1)
    assert not one.valid and "did not finish their fixed work" in (one.invalid_reason or "")
    assert "elapsed_s" not in one.extra
    # no time at 1 thread: the 2-thread row is the baseline, the cut row has no point
    assert res.scaling is not None
    s = res.scaling[0]
    assert s.baseline_threads == 2 and [p.threads for p in s.points] == [2]


def test_fixed_duration_runs_have_no_scaling() -> None:
    reps = [{"type": "result", "threads": 1, "repeat": 1, "value": 50.0, "unit": "GFLOP/s", "op": "fp64",
             "work": 10, "seconds": 5.0, "verified": True, "cpu_share": 1.0, "preemptions": 0}]
    assert compute_result("cpu", {"op": "fp64", "threads": [1]}, reps, {}, {}).scaling is None
    assert compute_result("cpu", {"op": "fp64", "threads": [1], "work": 0}, reps, {}, {}).scaling is None


def test_the_report_shows_a_strong_scaling_table_with_units() -> None:
    from app.reports.html import _scaling_table

    reps = [_rep(1, 1, 8.0), _rep(2, 1, 4.0), _rep(4, 1, 2.5)]
    scaling = compute_result("cpu", {"op": "fp64", "threads": [1, 2, 4], "work": 1_000_000}, reps, {}, {}).scaling
    assert scaling is not None
    text = _scaling_table(scaling[0])
    assert "Strong scaling of fp64: 1000000 units of work" in text
    assert "Elapsed (s, slowest thread)" in text and "Speedup T1/Tn (×)" in text and "Efficiency T1/(n·Tn)" in text
    assert "<td>4</td><td>2.500</td><td>2.475</td><td>3.200</td><td>80.0 %</td>" in text
