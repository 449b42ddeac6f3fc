"""hpcc 1.5.0: the summary section of real runs (mpirun -np 2)."""

from __future__ import annotations

import pytest


def test_headline_figures(parse, pick):
    r = parse("hpcc", "hpcc-1.5.0-np2-N1000-1500.txt")
    assert r["tool"] == "hpcc" and r["format"] == "text"
    hpl = pick(r, "hpl_gflops")
    assert hpl["value"] == 4.80779 and hpl["unit"] == "GFLOPS"  # HPL_Tflops=0.00480779
    assert hpl["printed"] == 0.00480779 and hpl["printed_unit"] == "Tflop/s"
    assert (hpl["n"], hpl["nb"], hpl["p"], hpl["q"], hpl["time"], hpl["processes"]) == (1500, 80, 1, 2, 0.468692, 2)
    assert pick(r, "dgemm_gflops", variant="star")["value"] == 3.40274
    assert pick(r, "dgemm_gflops", variant="single")["value"] == 3.54171
    triad = pick(r, "stream_triad", variant="star")
    assert triad["value"] == 80.4232 and triad["unit"] == "GB/s" and triad["key"] == "StarSTREAM_Triad"
    assert pick(r, "stream_add", variant="single")["value"] == 80.8865
    assert pick(r, "ptrans")["value"] == 5.30828
    assert pick(r, "randomaccess_gups", variant="mpi")["value"] == 0.00894972
    assert pick(r, "randomaccess_gups", variant="star")["value"] == 0.197451
    assert pick(r, "fft_gflops", variant="mpi")["value"] == 1.12916
    lat = pick(r, "pingpong_latency_max")
    assert lat["value"] == 0.11025 and lat["unit"] == "µs"
    assert pick(r, "ring_bandwidth_random")["value"] == 12.7523
    assert len(r["metrics"]) == 31


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("hpcc-1.5.0-np2-hpl-residual-failed.txt", r"hpcc reports Success=0: 1 HPL residual check\(s\) FAILED"),
        ("hpcc-1.5.0-np2-hpl-all-failed.txt", r"hpcc reports Success=0: 2 HPL residual check\(s\) FAILED"),
        ("hpcc-1.5.0-error-killed-midrun.txt", r"no 'Begin of Summary section.': the hpcc run did not finish"),
        ("hpcc-1.5.0-np2-N1000-1500-truncated.txt", r"the hpcc summary section has no 'End of Summary section.'"),
        ("empty.txt", r"the file is empty"),
        ("stream-5.10-gcc-O2.txt", r"not hpcc output: .*; it looks like stream output"),
    ],
)
def test_refusals(refuse, name, match):
    refuse("hpcc", name, match)


def test_missing_core_figure_is_refused(refuse, load):
    text = load("hpcc-1.5.0-np2-N1000-1500.txt").replace("StarDGEMM_Gflops=3.40274\n", "")
    refuse("hpcc", text, r"the hpcc summary lacks StarDGEMM_Gflops")


def test_garbage_inside_the_summary_is_refused(refuse, load):
    text = load("hpcc-1.5.0-np2-N1000-1500.txt").replace("HPL_Tflops=0.00480779", "HPL_Tflops=0.0O480779")
    refuse("hpcc", text, r"HPL_Tflops: '0.0O480779' is not a number")
    text = load("hpcc-1.5.0-np2-N1000-1500.txt").replace("PTRANS_GBs=5.30828", "PTRANS GBs 5.30828")
    refuse("hpcc", text, r"malformed line in the hpcc summary: 'PTRANS GBs 5.30828'")
