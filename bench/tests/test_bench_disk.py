"""bench disk's reading of fio: every figure its cases compare is found (a real fio 3.33 run: 4 KiB random reads,
QD1, direct, --lat_percentiles=1 --percentile_list=50:99:99.9, as the bench runs it). The issue-26 crash was a
KeyError 'p50' after three pairs: the cases named p50 and the reader gave "50"."""
from pathlib import Path

from hostbench_common.reftools import fio

from hostbench_bench import disk

FIXTURE = Path(__file__).parent / "fixtures" / "fio-3.33-randread-4k-qd1-lat-percentiles.json"


def test_every_fio_key_a_case_compares_is_read():
    got = disk.fio_figures(fio.parse_percentiles(FIXTURE.read_text()), "read")
    wanted = {fio_key for *_, metrics, _extra in disk.CASES for _s, _o, fio_key, _u in metrics}
    assert wanted <= set(got), wanted - set(got)
    assert got["iops"] > 0 and 0 < got["p50"] <= got["p99"] <= got["p99.9"]
