"""fio: JSON (json, json+) and normal text, real runs of fio 3.33 (tests/fixtures/reftools/README.md)."""

from __future__ import annotations

import pytest


def test_json_sequential_read_takes_bw_bytes_in_decimal_mb(parse, pick):
    r = parse("fio", "fio-3.33-seqread.json")
    assert r["tool"] == "fio" and r["format"] == "json"
    assert len(r["metrics"]) == 4
    keys = {"job": "seqread", "direction": "read"}
    bw = pick(r, "bw", **keys)
    # "bw_bytes": 1355893184 -> 1355.893184 MB/s (10^6 B/s); fio's own "bw": 1324114 is KiB/s
    assert bw["value"] == 1355.893184 and bw["unit"] == "MB/s" and bw["bw_from"] == "bw_bytes (bytes/s)"
    assert pick(r, "iops", **keys)["value"] == 1293.080506
    lat = pick(r, "lat_mean", **keys)
    assert lat["value"] == 757.237335 and lat["unit"] == "µs" and lat["lat_of"] == "lat"  # lat_ns mean 757237.334963
    p99 = pick(r, "lat_p99", **keys)
    assert p99["value"] == 12255.232 and p99["lat_p99_of"] == "clat"  # clat_ns percentile 99.000000: 12255232


def test_json_plus_randrw_reports_both_directions(parse, pick):
    r = parse("fio", "fio-3.33-randrw-jsonplus.json")
    assert r["format"] == "json"
    assert pick(r, "bw", direction="read")["value"] == 40.108315
    assert pick(r, "bw", direction="write")["value"] == 40.164275
    assert pick(r, "iops", direction="read")["value"] == 9792.06931
    assert pick(r, "iops", direction="write")["value"] == 9805.731423
    assert pick(r, "lat_mean", direction="write")["value"] == 7.941722
    assert pick(r, "lat_p99", direction="read")["value"] == 493.568
    assert {m["job"] for m in r["metrics"]} == {"randrw"}


def test_json_two_jobs_one_row_set_per_job(parse, pick):
    r = parse("fio", "fio-3.33-two-jobs.json")
    assert len(r["metrics"]) == 8
    assert pick(r, "bw", job="seqread", direction="read")["value"] == 228.804546
    assert pick(r, "iops", job="randwrite", direction="write")["value"] == 45232.53493
    assert pick(r, "lat_p99", job="randwrite", direction="write")["value"] == 8.512
    assert not [m for m in r["metrics"] if m["job"] == "seqread" and m["direction"] == "write"]


def test_json_kib_only_bw_is_converted_and_says_so(parse):
    # an older fio without bw_bytes: bw is KiB/s
    text = ('{"fio version": "fio-2.2.10", "jobs": [{"jobname": "old", "groupid": 0, "error": 0,'
            ' "read": {"io_bytes": 1048576, "bw": 1000, "iops": 250.0, "total_ios": 256}}]}')
    from hostbench_common.reftools import parse_text

    r = parse_text("fio", text)
    bw = r["metrics"][0]
    assert bw["name"] == "bw" and bw["value"] == 1.024 and bw["bw_from"] == "bw (KiB/s) x 1024 / 10^6"


def test_text_randrw(parse, pick):
    r = parse("fio", "fio-3.33-randrw.txt")
    assert r["format"] == "text"
    read = {"job": "randrw", "direction": "read"}
    assert pick(r, "bw", **read)["value"] == 17.7  # "BW=16.8MiB/s (17.7MB/s)": the decimal figure
    assert pick(r, "iops", **read)["value"] == 4310.0
    assert pick(r, "lat_mean", **read)["value"] == 215.90792  # "lat (nsec): ... avg=215907.92"
    assert pick(r, "lat_p99", **read)["value"] == 3194.88  # "clat percentiles (nsec)" 99.00th=[ 3194880]
    write = {"job": "randrw", "direction": "write"}
    assert pick(r, "lat_p99", **write)["value"] == 50.0  # "clat percentiles (usec)" 99.00th=[   50]
    assert pick(r, "iops", **write)["value"] == 4316.0


def test_text_units_k_suffix_and_msec(parse, pick):
    r = parse("fio", "fio-3.33-two-jobs.txt")
    assert pick(r, "iops", job="randwrite")["value"] == 32000.0  # "IOPS=32.0k"
    assert pick(r, "bw", job="randwrite")["value"] == 131.0
    assert pick(r, "lat_mean", job="seqread")["value"] == 3010.56  # "lat (usec): ... avg=3010.56"
    assert pick(r, "lat_p99", job="seqread")["value"] == 22414.0
    w = parse("fio", "fio-3.33-seqwrite.txt")
    assert pick(w, "bw", direction="write")["value"] == 926.0
    assert pick(w, "lat_mean", direction="write")["value"] == 733.91


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("fio-3.33-error-proc.json", r"fio job 'bad' reports error 2 \(ENOENT: No such file or directory\)"),
        ("fio-3.33-error-proc.txt", r"fio reported an error: 'fio: pid=0, err=2/file:filesetup.c:174"),
        ("fio-3.33-error-badopt.txt", r"fio reported an error: 'fio: failed parsing rw=bogus'"),
        ("fio-3.33-seqread-truncated.json", r"the fio JSON is incomplete or corrupt \(truncated output\?\)"),
        ("fio-3.33-randrw-truncated.txt", r"no 'Run status group' summary after the last fio job: the output is truncated"),
        ("empty.txt", r"the file is empty"),
        ("iperf3-3.12-tcp.json", r"not fio output: the JSON has no 'fio version' and 'jobs'"),
        ("iozone-3.489-auto.txt", r"not fio output: .*; it looks like iozone output"),
    ],
)
def test_refusals(refuse, name, match):
    refuse("fio", name, match)


def test_a_job_that_did_no_io_is_refused(refuse):
    text = ('{"fio version": "fio-3.33", "jobs": [{"jobname": "idle", "groupid": 0, "error": 0,'
            ' "read": {"io_bytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0, "total_ios": 0}}]}')
    refuse("fio", text, "no job that did any I/O")


def test_json_with_a_non_numeric_figure_is_refused(refuse):
    text = ('{"fio version": "fio-3.33", "jobs": [{"jobname": "x", "groupid": 0, "error": 0,'
            ' "read": {"io_bytes": 10, "total_ios": 1, "bw_bytes": "fast", "iops": 1}}]}')
    refuse("fio", text, "'bw_bytes' is 'fast', not a number")
