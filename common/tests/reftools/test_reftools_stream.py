"""STREAM 5.10 (real builds of stream.c) and hpcc's StarSTREAM table; OCR'd seeds must be refused."""

from __future__ import annotations

import pytest


def test_stream_510_best_rates_and_times(parse, pick):
    r = parse("stream", "stream-5.10-gcc-O2.txt")
    assert r == {"tool": "stream", "format": "text", "metrics": r["metrics"]}
    assert [m["name"] for m in r["metrics"]] == ["copy", "scale", "add", "triad"]
    copy = pick(r, "copy")
    assert copy == {"name": "copy", "value": 40906.6, "unit": "MB/s", "avg_time": 0.008065, "min_time": 0.003911,
                    "max_time": 0.017637, "time_unit": "s", "array_size": 10000000}
    assert pick(r, "scale")["value"] == 39563.5
    assert pick(r, "add")["value"] == 40128.3
    assert pick(r, "triad")["value"] == 39073.4
    assert pick(r, "triad")["min_time"] == 0.006142


def test_stream_openmp_keeps_thread_count(parse, pick):
    r = parse("stream", "stream-5.10-openmp-2threads.txt")
    assert pick(r, "copy")["value"] == 27601.2
    assert all(m["threads"] == 2 for m in r["metrics"])


def test_hpcc_starstream_table_in_mb_per_s(parse, pick):
    r = parse("stream", "hpcc-1.5.0-np2-N1000-1500.txt")
    triad = pick(r, "triad")
    assert triad["value"] == 80423.2 and triad["unit"] == "MB/s"  # "Triad: 80.4232" GB/s x 1000
    assert triad["printed"] == 80.4232 and triad["printed_unit"] == "GB/s"
    assert triad["processes"] == 2 and "hpcc StarSTREAM" in triad["source"]
    assert pick(r, "copy")["value"] == 115411.2


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("stream-5.10-error-validation-failed-injected.txt",
         r"STREAM's validation failed: 'Failed Validation on array a\[\], AvgRelAbsErr > epsilon \(1.000000e-13\)'"),
        ("stream-5.10-gcc-O2-truncated.txt", r"the STREAM table lacks the triad row\(s\)"),
        ("seed-000-stream-ocr-scrambled.txt", r"malformed STREAM table line 21: '12258.7 0.013063 0.013052 0.013087'"),
        ("seed-001-stream-ocr-duplicated-scale.txt", r"the STREAM table has two 'Scale:' rows"),
        ("seed-002-stream-ocr-scrambled.txt", r"not stream output: no 'Function  Best Rate MB/s"),
        ("empty.txt", r"the file is empty"),
        ("fio-3.33-randrw.txt", r"not stream output: .*; it looks like fio output"),
        ("fio-3.33-seqread.json", r"not stream output: stream writes text, this is JSON; it looks like fio output"),
    ],
)
def test_refusals(refuse, name, match):
    refuse("stream", name, match)


def _table(copy: str = "Copy:           40906.6     0.008065     0.003911     0.017637", tail: str = "") -> str:
    return (
        "STREAM version $Revision: 5.10 $\n"
        "This system uses 8 bytes per array element.\n"
        "Array size = 10000000 (elements), Offset = 0 (elements)\n"
        "Function    Best Rate MB/s  Avg time     Min time     Max time\n"
        f"{copy}\n"
        "Scale:          39563.5     0.006583     0.004044     0.008308\n"
        "Add:            40128.3     0.009116     0.005981     0.012329\n"
        "Triad:          39073.4     0.011368     0.006142     0.016326\n"
        "-------------------------------------------------------------\n"
        f"{tail}"
    )


def test_the_edited_real_table_parses_with_its_validation_line(refuse):
    from hostbench_common.reftools import parse_text

    ok = parse_text("stream", _table(tail="Solution Validates: avg error less than 1.000000e-13 on all three arrays\n"))
    assert ok["metrics"][0]["value"] == 40906.6


def test_no_solution_validates_line_is_refused(refuse):
    refuse("stream", _table(), r"no 'Solution Validates' line after the STREAM table")


def test_a_rate_that_does_not_follow_from_the_min_time_is_refused(refuse):
    # one digit changed (40906.6 -> 49906.6), as OCR or a hand edit does
    bad = _table(copy="Copy:           49906.6     0.008065     0.003911     0.017637",
                 tail="Solution Validates: avg error less than 1.000000e-13 on all three arrays\n")
    refuse("stream", bad, r"STREAM copy: the rate 49906.6 MB/s does not follow from the array size")


def test_times_out_of_order_are_refused(refuse):
    bad = _table(copy="Copy:           40906.6     0.002000     0.003911     0.017637",
                 tail="Solution Validates: avg error less than 1.000000e-13 on all three arrays\n")
    refuse("stream", bad, r"STREAM copy: times are inconsistent \(min 0.003911, avg 0.002, max 0.017637\)")


def test_older_stream_5x_format_with_coarser_times():
    # STREAM 5.8/5.9 layout: "Rate (MB/s)", times printed to 0.1 ms ("%11.4f"), array of 2,000,000
    from hostbench_common.reftools import parse_text

    text = (
        "STREAM version $Revision: 5.9 $\n"
        "This system uses 8 bytes per DOUBLE PRECISION word.\n"
        "Array size = 2000000, Offset = 0\n"
        "Function      Rate (MB/s)   Avg time     Min time     Max time\n"
        "Copy:        4312.9516       0.0075       0.0074       0.0077\n"
        "Scale:       4290.4117       0.0075       0.0075       0.0076\n"
        "Add:         4707.4232       0.0103       0.0102       0.0104\n"
        "Triad:       4700.8861       0.0103       0.0102       0.0104\n"
        "-------------------------------------------------------------\n"
        "Solution Validates\n"
        "-------------------------------------------------------------\n"
    )
    r = parse_text("stream", text)
    assert [m["value"] for m in r["metrics"]] == [4312.9516, 4290.4117, 4707.4232, 4700.8861]
