"""The FMA probe on this machine (the runner's inventory, its real kernel) against the CPU peak table, through
the API's peaks (app.hosts.peaks: the common table's result as the API's Peak). The table's rows against
the published figures, and the inference for a CPU it does not know: common/tests/test_peaks_x86.py."""
import platform
from pathlib import Path

import pytest
from hostbench_common import peaks as common_peaks
from hostbench_runner.inventory import collect, fma_probe, probe_isas

from app.hosts import peaks
from app.hosts.peaks import cpu_peak, microarch
from app.hosts.schemas import Peak

HBK = Path(__file__).resolve().parents[2] / "runner" / "kernels" / "build" / "hbk"


def test_the_probe_on_this_machine_agrees_with_the_table():
    """The real kernel on this host's CPU (named in the output): FLOP/cycle never above the table's, and the
    FMA units equal to the table's when the probe had its CPU."""
    inventory = collect("/", kernel_bin=HBK)
    cpu = inventory["cpu"]
    probe = cpu["fma_probe"]
    isas = probe_isas(cpu)
    assert probe and set(probe["isa"]) == set(isas), probe
    arch = microarch(cpu)
    print(f"this machine: {cpu['model']} ({cpu['vendor']} family {cpu['family']} model {cpu['model_number']}, "
          f"{platform.machine()}), table: {arch.name if arch else 'not in the table'}; probe: {probe['isa']}")
    for isa, fig in probe["isa"].items():
        if arch is not None and isa != "sse2":
            table, _ = cpu_peak({"cpu": cpu}, "fp64", 1, isa, 1.0)
            assert fig["flop_per_cycle"] <= 1.1 * table.value, (isa, fig, table.formula)
            if fig["fma_units"] is not None:  # the table's FLOP/cycle in FMAs of this width
                assert fig["fma_units"] == round(table.value / (2 * fma_probe.LANES64[isa])), (isa, fig, table.formula)
        if fig["cpu_share"] < fma_probe.QUIET_SHARE or (fig.get("neighbours_busy") or 0) > fma_probe.NEIGHBOURS_BUSY_MAX:
            assert fig["fma_units"] is None  # a disturbed probe says nothing about the units


def test_the_api_peak_is_the_common_peak_as_the_api_s_model():
    """app.hosts.peaks.cpu_peak is hostbench_common.peaks.cpu_peak with its result as the API's pydantic Peak:
    the same figure, arithmetic and source; an unknown peak the same note."""
    zen4 = {"cpu": {"vendor": "AuthenticAMD", "family": 0x19, "model_number": 0x11, "sockets": 1,
                    "cores_per_socket": 2, "isa": ["sse2", "avx", "fma", "avx2", "avx512f"], "best_isa": "avx512"}}
    unknown = {"cpu": {**zen4["cpu"], "model_number": 0xEE}}
    for inventory, op, ghz in ((zen4, "fp64", 3.65), (zen4, "int32", 3.65), (unknown, "fp32", 3.0),
                               (unknown, "int32", 3.0), (zen4, "fp64", None)):
        api, why = cpu_peak(inventory, op, 2, "avx512", ghz)
        shared, shared_why = common_peaks.cpu_peak(inventory, op, 2, "avx512", ghz)
        assert why == shared_why
        if shared is None:
            assert api is None
        else:
            assert isinstance(api, Peak) and api.since is None
            assert (api.value, api.unit, api.formula, api.source) == \
                (shared.value, shared.unit, shared.formula, shared.source)
    assert peaks.peak_clock_ghz is common_peaks.peak_clock_ghz and peaks.microarch is common_peaks.microarch


ZEN5 = {"cpu": {"vendor": "AuthenticAMD", "family": 26, "model_number": 2, "sockets": 1, "cores_per_socket": 2,
                "best_isa": "avx512"}}


def test_a_run_s_fp_peak_is_at_its_vector_loaded_clock_and_its_formula_says_so():
    """The issue's Intel figures through compute_result: 117.3 GFLOP/s at 1 thread was 0.92 of 32 FLOP × the
    scalar chain's 3.98 GHz; at the clock the core ran its AVX-512 FMAs at it is close to the peak, the formula
    names that clock and gives both figures; int32 keeps the scalar chain's."""
    from app.results.service import compute_result

    info = {"isa": "avx512", "clock_ghz": 3.98, "clock_ghz_all_cpus": 3.96,
            "clock_vector_ghz": 3.66, "clock_vector_ghz_all_cpus": 3.60}
    raw = [{"op": "fp64", "threads": t, "repeat": r, "value": v * t, "unit": "GFLOP/s", "verified": True,
            "clock_after_ghz": 3.97, "clock_after_vector_ghz": after}
           for t in (1, 2) for r, (v, after) in enumerate(((117.3, 3.65), (117.0, 3.68), (116.8, 3.64)), 1)]
    rows = {row.threads: row for row in compute_result("cpu", {"op": "fp64"}, raw, info, ZEN5).rows}
    one, two = rows[1], rows[2]
    assert one.peak.value == pytest.approx(32 * 3.68)  # the highest vector-loaded clock: before or after a phase
    assert two.peak.value == pytest.approx(2 * 32 * 3.68)
    assert 0.99 < one.efficiency < 1.0 and one.valid
    assert "(vector-loaded clock, AVX-512)" in one.peak.formula
    assert "the clocks differ: scalar chain 3.980 GHz, vector-loaded 3.680 GHz (-7.5 %)" in one.peak.formula
    assert "scalar chain 3.970 GHz" in two.peak.formula  # 2 threads: the all-CPU and after-phase clocks
    # the same run from a kernel without the vector-loaded clock: the scalar chain's, and the formula says so
    old_info = {k: v for k, v in info.items() if "vector" not in k}
    old = [{k: v for k, v in r.items() if "vector" not in k} for r in raw]
    row = compute_result("cpu", {"op": "fp64"}, old, old_info, ZEN5).rows[0]
    assert row.peak.value == pytest.approx(32 * 3.98) and row.efficiency < 0.93
    assert "(scalar-chain clock, the run has no vector-loaded one)" in row.peak.formula
    # a figure above the vector-loaded peak is still flagged: the clock is what the core ran at, not a margin
    high = [dict(r, value=r["value"] * 1.1) for r in raw]
    row = compute_result("cpu", {"op": "fp64"}, high, info, ZEN5).rows[0]
    assert not row.valid and "above the theoretical peak" in row.invalid_reason
    # int32: a vector-loaded clock from FMAs is not its load; the scalar chain's clock
    ints = [dict(r, op="int32", unit="GIOP/s") for r in raw]
    row = compute_result("cpu", {"op": "int32"}, ints, info, ZEN5).rows[0]
    assert row.peak.value == pytest.approx(64 * 3.98) and "(scalar-chain clock)" in row.peak.formula


def test_clocks_within_two_percent_are_one_clock_in_the_formula():
    for scalar, vector, differ in ((4.0, 3.93, False), (4.0, 3.91, True), (3.9, 3.99, True), (3.9, 3.97, False)):
        peak, _ = cpu_peak(ZEN5, "fp32", 1, "avx512", common_peaks.RunClock(scalar, vector))
        assert peak.value == pytest.approx(64 * vector) and "vector-loaded clock, AVX-512" in peak.formula
        assert ("the clocks differ" in peak.formula) == differ, (scalar, vector, peak.formula)
