"""IOzone 3.489: auto table, partial tables with blank columns, -R reports, throughput mode."""

from __future__ import annotations

import pytest

from hostbench_common.reftools.iozone import COLUMNS


def test_auto_table_every_test_and_record_size(parse, pick):
    r = parse("iozone", "iozone-3.489-auto.txt")
    assert r["format"] == "text"
    assert len(r["metrics"]) == 21 * 13  # 3 file sizes x 7 record sizes x 13 tests
    first = pick(r, "write", file_kb=1024, record_kb=4)
    assert first == {"name": "write", "value": 1368780, "unit": "KB/s", "file_kb": 1024, "record_kb": 4}
    # row "1024 4 1368780 3877004 6280976 4550690 4044965 2638501 4531485 5096034 3764854 3591693 3761557 4826859 5336651"
    row = [m["value"] for m in r["metrics"] if m["file_kb"] == 1024 and m["record_kb"] == 4]
    assert row == [1368780, 3877004, 6280976, 4550690, 4044965, 2638501, 4531485, 5096034, 3764854, 3591693,
                   3761557, 4826859, 5336651]
    assert [m["name"] for m in r["metrics"][:13]] == list(COLUMNS)
    assert pick(r, "freread", file_kb=4096, record_kb=256)["value"] == 34442006
    assert pick(r, "stride_read", file_kb=2048, record_kb=128)["value"] == 52439779


def test_blank_columns_do_not_shift_figures(parse, pick):
    # iozone -i 0 -i 2: write, rewrite, then blanks under read/reread, then random read/write
    r = parse("iozone", "iozone-3.489-write-random.txt")
    assert {m["name"]: m["value"] for m in r["metrics"]} == {
        "write": 4476482, "rewrite": 12606249, "random_read": 18800352, "random_write": 13879294}
    s = parse("iozone", "iozone-3.489-single.txt")
    assert {m["name"]: m["value"] for m in s["metrics"]} == {
        "write": 4067390, "rewrite": 13476460, "read": 20263922, "reread": 17806558}
    assert pick(s, "read")["file_kb"] == 4096 and pick(s, "read")["record_kb"] == 64


def test_excel_reports_agree_with_the_table(parse, pick, load):
    r = parse("iozone", "iozone-3.489-auto-R.txt")
    assert len(r["metrics"]) == 4 * 13
    assert pick(r, "record_rewrite", file_kb=1024, record_kb=64)["value"] == 1079190


def test_excel_report_that_disagrees_is_refused(refuse, load):
    text = load("iozone-3.489-auto-R.txt").replace('"1024"   4095102  364666', '"1024"   4095103  364666')
    refuse("iozone", text, r"iozone -R 'Writer report' says 4095103 for 1024 kB / 64 kB but the table says 4095102")


def test_throughput_mode_children_figures(parse, pick):
    r = parse("iozone", "iozone-3.489-throughput-R.txt")
    assert [m["name"] for m in r["metrics"]] == ["write", "rewrite", "read", "reread", "random_read", "random_write"]
    w = pick(r, "write")
    assert w["value"] == 1448823.62 and w["unit"] == "KB/s" and w["processes"] == 2 and w["mode"] == "throughput"
    assert (w["file_kb"], w["record_kb"], w["parent"]) == (4096, 4, 352647.69)
    assert pick(r, "random_read")["value"] == 8646748.0
    # "Min xfer = 0.00 kB" for the re-readers: one process did nothing; flagged, not dropped
    rr = pick(r, "reread")
    assert rr["value"] == 4302706.0 and rr["valid"] is False and "Min xfer = 0 kB" in rr["invalid_reason"]
    assert "valid" not in pick(r, "read")


def test_throughput_report_that_disagrees_is_refused(refuse, load):
    text = load("iozone-3.489-throughput-R.txt").replace('"           Read " 9530360.75', '"           Read " 9530361.75')
    refuse("iozone", text, r"iozone -R throughput row 'Read' \[9530361.75\] disagrees")


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("iozone-3.489-error-open.txt",
         r"no 'iozone test complete.' line: the run did not finish: iozone said 'Can not open temp file: "
         r"/proc/hostbench-nope/iozone.tmp'"),
        ("iozone-3.489-auto-truncated.txt", r"no 'iozone test complete.' line: the run did not finish \(truncated output\)"),
        ("iozone-3.489-throughput-R-truncated.txt", r"the run did not finish \(truncated output\)"),
        ("seed-001-iozone-auto-ocr-scrambled.txt", r"no complete iozone result table header"),
        ("seed-002-iozone-ocr-split-row.txt", r"no complete iozone result table header"),
        ("seed-003-iozone-ocr-split-header.txt", r"no complete iozone result table header"),
        ("seed-000-iozone-throughput-R-ocr-garbled.txt",
         r"malformed iozone throughput line 44: 'Children see throughput for 5 reverse readers'"),
        ("empty.txt", r"the file is empty"),
        ("fio-3.33-seqwrite.txt", r"not iozone output: .*; it looks like fio output"),
    ],
)
def test_refusals(refuse, name, match):
    refuse("iozone", name, match)


def test_table_row_garbled_by_ocr_is_refused(refuse, load):
    base = load("iozone-3.489-single.txt")
    row = "            4096      64  4067390 13476460 20263922 17806558"
    assert row in base
    refuse("iozone", base.replace(row, "            4096      64  4067390 13476460 2026392Z 17806558"),
           r"malformed iozone table line")
    refuse("iozone", base.replace(row, "            4096      64  4067390 13476460      20263922 17806558"),
           r"the figure 20263922 is not under a column header")
    refuse("iozone", base.replace(row, row + "\n" + row), r"file 4096 kB / record 64 kB given twice")
