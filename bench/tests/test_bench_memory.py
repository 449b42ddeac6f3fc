"""bench memory's reading of hpcc's STREAM (pure logic, on a real hpcc output)."""
from pathlib import Path

from hostbench_bench.memory import parse_hpcc_stream


def test_hpcc_stream_is_summed_over_its_processes():
    # hpcc's Star figures are per process with every process running: the total is their sum
    text = (Path(__file__).resolve().parents[2] / "common" / "tests" / "fixtures" / "reftools" /
            "hpcc-1.5.0-np2-N1000-1500.txt").read_text()
    got = parse_hpcc_stream(text, 2)
    summary = dict(line.split("=", 1) for line in text.splitlines() if line.startswith(("STREAM_VectorSize=", "StarSTREAM_")))
    assert got["array_size"] == 2 * int(summary["STREAM_VectorSize"])
    assert got["copy"] == float(summary["StarSTREAM_Copy"]) * 2000 and got["triad"] == float(summary["StarSTREAM_Triad"]) * 2000


def test_hpcc_is_sized_by_the_stream_rule():
    from hostbench_bench.memory import HPCC_N, HPCC_NB, hpcc_n_for

    assert hpcc_n_for(1000) == HPCC_N + (-HPCC_N) % HPCC_NB  # small L3: hpcc's usual size
    huge = 4 * 480 * 2**20 // 8  # the 480 MiB L3: 4 x L3 per array
    n = hpcc_n_for(huge)
    assert n % HPCC_NB == 0 and n * n // 3 >= huge and (n - HPCC_NB) ** 2 // 3 < huge


def test_a_huge_l3_on_a_small_memory_is_skipped_with_the_reason_not_a_traceback(monkeypatch, capsys):
    """The rule needs more memory than the host has: the report says which comparisons were skipped and why,
    and ends with its JSON line."""
    import json

    from hostbench_bench import memory

    monkeypatch.setattr(memory, "stream_rule", lambda: (4 * 480 * 2**20 // 8, {"l3_total": 480 * 2**20, "source": "stub", "isa": "avx512"}))
    monkeypatch.setattr(memory, "mem_available", lambda: 4 * 2**30)
    report = memory.run(1)
    assert report.pairs == [] and report.skipped and "do not fit" in report.skipped[0]
    report.print()
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["skipped"] == report.skipped


def test_likwid_runs_the_test_of_the_isa_our_kernel_runs():
    """An AVX-512 likwid test on an AVX2 CPU dies with SIGILL: the pair uses the same vector ISA as ours."""
    from hostbench_common.reftools.likwid import MEMORY_ISA, MEMORY_TESTS

    assert [base + MEMORY_ISA["avx2"] for base, _ in MEMORY_TESTS.values()] == ["copy_mem_avx", "stream_mem_avx"]
    assert [base + MEMORY_ISA["avx512"] for base, _ in MEMORY_TESTS.values()] == ["copy_mem_avx512",
                                                                               "stream_mem_avx512"]
