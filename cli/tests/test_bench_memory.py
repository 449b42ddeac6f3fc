"""bench memory's reading of hpcc's STREAM (pure logic, on a real hpcc output)."""
from pathlib import Path

from hostbench_cli.bench.memory import parse_hpcc_stream


def test_hpcc_stream_is_summed_over_its_processes():
    # hpcc's Star figures are per process with every process running: the total is their sum
    text = (Path(__file__).resolve().parents[2] / "runner" / "tests" / "fixtures" / "reftools" /
            "hpcc-1.5.0-np2-N1000-1500.txt").read_text()
    got = parse_hpcc_stream(text, 2)
    summary = dict(line.split("=", 1) for line in text.splitlines() if line.startswith(("STREAM_VectorSize=", "StarSTREAM_")))
    assert got["array_size"] == 2 * int(summary["STREAM_VectorSize"])
    assert got["copy"] == float(summary["StarSTREAM_Copy"]) * 2000 and got["triad"] == float(summary["StarSTREAM_Triad"]) * 2000
