"""ARM rows of the CPU peak table: each core's per-core FLOP/cycle against the figure its vendor publishes.
The core found from /proc/cpuinfo as the runner parses it: backend/tests/test_peaks_arm.py."""

from __future__ import annotations

import pytest

from hostbench_common.peaks import cpu_peak, microarch

# (implementer, part, published FP64 FLOP/cycle/core, FP32, ISAs the core has, name). Published: Arm
# Neoverse Software Optimization Guides: N1 and N2 have two 128-bit FP/SIMD pipes (V0, V1) with FMA:
# 2 x 2 lanes x 2 = 8 FP64 FLOP/cycle; V1 "2 x 256-bit SVE" (four 128-bit NEON pipes) and V2 four 128-bit
# SVE2 pipes: 16. AmpereOne: "two 128-bit vector units" (Ampere): 8. FP32 doubles the lanes.
PUBLISHED = [
    ("ARM", 0xD0C, 8, 16, ("neon",), "Neoverse N1"),
    ("ARM", 0xD49, 8, 16, ("neon", "sve"), "Neoverse N2"),
    ("ARM", 0xD40, 16, 32, ("neon", "sve"), "Neoverse V1"),
    ("ARM", 0xD4F, 16, 32, ("neon", "sve"), "Neoverse V2"),
    ("Ampere", 0xAC3, 8, 16, ("neon",), "AmpereOne"),
    ("Ampere", 0xAC4, 8, 16, ("neon",), "AmpereOne (Ampere1A)"),
]


def arm_inventory(vendor: str, part: int, cores: int = 4) -> dict:
    return {"cpu": {"model": None, "vendor": vendor, "family": None, "model_number": part, "sockets": 1,
                    "cores_per_socket": cores, "threads_per_core": 1, "isa": ["neon"], "best_isa": "neon",
                    "max_mhz": None}}


@pytest.mark.parametrize("vendor,part,fp64,fp32,isas,name", PUBLISHED)
def test_arm_per_core_flop_per_cycle_matches_the_published_figure(vendor, part, fp64, fp32, isas, name):
    inv = arm_inventory(vendor, part)
    assert microarch(inv["cpu"]).name == name
    for isa in isas:
        p64, why = cpu_peak(inv, "fp64", 1, isa, 1.0)  # 1 core at 1 GHz: GFLOP/s = FLOP/cycle
        p32, _ = cpu_peak(inv, "fp32", 1, isa, 1.0)
        assert why is None and p64.value == fp64 and p32.value == fp32, (name, isa)
        assert name in p64.formula and isa in p64.formula
    p4, _ = cpu_peak(inv, "fp64", 4, isas[-1], 2.6)
    assert p4.value == pytest.approx(4 * 2.6 * fp64)


def test_arm_int32_vector_adds_per_cycle():
    # ASIMD integer add on every FP/SIMD pipe: N1 two (2 x 4 lanes), V2 four (4 x 4 lanes)
    assert cpu_peak(arm_inventory("ARM", 0xD0C), "int32", 1, "neon", 1.0)[0].value == 8
    assert cpu_peak(arm_inventory("ARM", 0xD4F), "int32", 1, "sve", 1.0)[0].value == 16


def test_unknown_arm_part_is_unknown_not_guessed():
    peak, why = cpu_peak(arm_inventory("ARM", 0xD0B), "fp64", 1, "neon", 2.0)  # Cortex-A76: not in the table
    assert peak is None and "not in the peak table" in why
    # the implementer matters: 0xd0c is Neoverse N1 only as an ARM part
    assert microarch({"vendor": "Ampere", "family": None, "model_number": 0xD0C}) is None
