"""The FMA probe on this machine (the runner's inventory, its real kernel) against the CPU peak table, through
the API's peaks (app.hosts.peaks: the common table's result as the API's Peak). The table's rows against
the published figures, and the inference for a CPU it does not know: common/tests/test_peaks_x86.py."""
import platform
from pathlib import Path

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
        if fig["cpu_share"] < fma_probe.QUIET_SHARE:
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
