"""HPL (the HPL section of real hpcc runs) and Intel Optimized LINPACK (the legible seed 004 run)."""

from __future__ import annotations

import pytest


def test_hpl_rows_and_best(parse, pick):
    r = parse("hpl", "hpcc-1.5.0-np2-N1000-1500.txt")
    assert r["format"] == "text" and len(r["metrics"]) == 3
    best = pick(r, "gflops", best=True)
    assert best == {"name": "gflops", "value": 4.808, "unit": "GFLOPS", "best": True, "n": 1500, "nb": 80, "p": 1,
                    "q": 2, "time": 0.47, "time_unit": "s", "tv": "WR11C2R4"}
    row = pick(r, "gflops", n=1000, best=None)
    assert row["value"] == 3.25 and row["time"] == 0.21 and row["nb"] == 80 and (row["p"], row["q"]) == (1, 2)
    assert row["residual"] == 0.007251 and row["residual_check"] == "PASSED" and row["valid"] is True


def test_hpl_failed_residual_row_is_flagged_not_best(parse, pick):
    r = parse("hpl", "hpcc-1.5.0-np2-hpl-residual-failed.txt")
    failed = pick(r, "gflops", n=1000, best=None)
    assert failed["value"] == 2.911 and failed["valid"] is False and failed["residual_check"] == "FAILED"
    assert failed["invalid_reason"] == ("HPL residual check FAILED (scaled residual 0.007251; threshold as printed: 0.0)")
    best = pick(r, "gflops", best=True)
    assert best["value"] == 4.777 and best["n"] == 1500
    assert pick(r, "gflops", n=1500, best=None)["valid"] is True


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("hpcc-1.5.0-np2-hpl-all-failed.txt", r"no result passed its residual check \(HPL residual check FAILED"),
        ("hpcc-1.5.0-np2-truncated-in-hpl.txt", r"no 'End of Tests.' after the last HPL result: the output is truncated"),
        ("hpcc-1.5.0-error-killed-midrun.txt", r"HPL output without any result row"),
        ("seed-004-linpack-intel-mkl2018-truncated.txt", r"without its 'Performance Summary \(GFlops\)' after the trials"),
        ("seed-000-linpack-intel-ocr-scrambled.txt", r"without exactly one 'Size LDA Align. Time\(s\) GFlops"),
        ("seed-002-linpack-intel-ocr-scrambled.txt", r"without exactly one 'Size LDA Align. Time\(s\) GFlops"),
        ("seed-003-linpack-intel-ocr-scrambled.txt", r"without exactly one 'Size LDA Align. Time\(s\) GFlops"),
        ("empty.txt", r"the file is empty"),
        ("ping-iputils-20221126-loopback.txt", r"not hpl output: .*; it looks like ping output"),
    ],
)
def test_refusals(refuse, name, match):
    refuse("hpl", name, match)


def test_hpl_tally_that_disagrees_with_the_rows_is_refused(refuse, load):
    text = load("hpcc-1.5.0-np2-N1000-1500.txt").replace(
        "              2 tests completed and passed residual checks,",
        "              1 tests completed and passed residual checks,")
    refuse("hpl", text, r"HPL says 1 tests passed and 0 failed, but the file shows 2 PASSED and 0 FAILED rows")


def test_intel_linpack_summary_best_and_sizes(parse, pick):
    r = parse("hpl", "seed-004-linpack-intel-mkl2018.txt")
    assert len(r["metrics"]) == 8  # headline + 7 sizes (the binary skipped the sizes that did not fit in memory)
    best = pick(r, "gflops", best=True)
    assert best["value"] == 76.7816 and best["n"] == 15000 and best["time"] == 29.31
    assert best["variant"] == "intel-linpack"
    row = pick(r, "gflops", n=1000, best=None)
    assert row["value"] == 49.9148 and row["average"] == 43.7833 and row["trials"] == 4 and row["time"] == 0.013
    assert pick(r, "gflops", n=20000, best=None)["lda"] == 20016


def test_intel_failed_trial_is_flagged_and_excluded(parse, pick, load):
    text = load("seed-004-linpack-intel-mkl2018.txt").replace(
        "15000 15000 4 29.310 76.7816 2.219450e-10 3.495671e-02 pass",
        "15000 15000 4 29.310 76.7816 2.219450e-10 3.495671e-02 fail").replace(
        "Residual checks PASSED", "Residual checks FAILED")
    from hostbench_common.reftools import parse_text

    r = parse_text("hpl", text)
    row = pick(r, "gflops", n=15000, best=None)
    assert row["value"] == 75.9849 and row["failed_trials"] == 1 and row["valid"] is True
    assert pick(r, "gflops", best=True)["value"] == 75.9849


def test_intel_pass_verdict_with_a_failed_trial_is_refused(refuse, load):
    text = load("seed-004-linpack-intel-mkl2018.txt").replace(
        "15000 15000 4 29.310 76.7816 2.219450e-10 3.495671e-02 pass",
        "15000 15000 4 29.310 76.7816 2.219450e-10 3.495671e-02 fail")
    refuse("hpl", text, r"says 'Residual checks PASSED' but a trial row says fail")


def test_intel_summary_that_does_not_follow_from_trials_is_refused(refuse, load):
    text = load("seed-004-linpack-intel-mkl2018.txt").replace("15000 15000 4 76.3832 76.7816",
                                                              "15000 15000 4 76.3832 86.7816")
    refuse("hpl", text, r"Intel LINPACK size 15000: the summary \(average 76.3832, maximal 86.7816\) does not follow")
