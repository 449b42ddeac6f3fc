"""x86 rows of the CPU peak table against the published per-core FP64 FLOP/cycle of each microarchitecture,
the inference for a CPU the table does not know (ISA flags, the FMA probe stubbed), and a table row
overruled by what the host has (AMX) or measured (the probe). The probe on this machine against the table:
backend/tests/test_peaks_x86.py (it needs the runner and its kernel)."""

from __future__ import annotations

import pytest

from hostbench_common.peaks import cpu_peak, microarch

# (vendor, family, model, ISA the kernel uses, published FP64 FLOP/cycle per core, table name contains).
# Published: Intel 64 and IA-32 Architectures Optimization Reference Manual (FMA on ports 0 and 1 at 256 bits
# since Haswell; a second 512-bit FMA on port 5 in Xeon Scalable; client Sunny/Willow/Cypress Cove: one fused
# 512-bit FMA; Gracemont/Crestmont E-cores: two 128-bit FMA); AMD Software Optimization Guides for families
# 17h/19h/1Ah (two FMA pipes: 128-bit in Zen, 256-bit Zen 2-4, 512-bit Zen 5 desktop/server, 256 in mobile).
PUBLISHED = [
    ("AuthenticAMD", 0x17, 0x01, "avx2", 8, "Zen"),
    ("AuthenticAMD", 0x17, 0x08, "avx2", 8, "Zen"),
    ("HygonGenuine", 0x18, 0x00, "avx2", 8, "Dhyana"),
    ("AuthenticAMD", 0x17, 0x31, "avx2", 16, "Zen 2"),
    ("AuthenticAMD", 0x17, 0x71, "avx2", 16, "Zen 2"),
    ("AuthenticAMD", 0x19, 0x01, "avx2", 16, "Zen 3"),
    ("AuthenticAMD", 0x19, 0x21, "avx2", 16, "Zen 3"),
    ("AuthenticAMD", 0x19, 0x50, "avx2", 16, "Zen 3"),
    ("AuthenticAMD", 0x19, 0x11, "avx512", 16, "Zen 4"),
    ("AuthenticAMD", 0x19, 0x61, "avx512", 16, "Zen 4"),
    ("AuthenticAMD", 0x19, 0xA0, "avx512", 16, "Zen 4"),
    ("AuthenticAMD", 0x1A, 0x02, "avx512", 32, "Zen 5"),
    ("AuthenticAMD", 0x1A, 0x11, "avx512", 32, "Zen 5"),
    ("AuthenticAMD", 0x1A, 0x44, "avx512", 32, "Zen 5"),
    ("AuthenticAMD", 0x1A, 0x24, "avx512", 16, "Strix Point"),
    ("GenuineIntel", 0x06, 0x3F, "avx2", 16, "Haswell"),
    ("GenuineIntel", 0x06, 0x4F, "avx2", 16, "Broadwell"),
    ("GenuineIntel", 0x06, 0x5E, "avx2", 16, "Skylake client"),
    ("GenuineIntel", 0x06, 0x9E, "avx2", 16, "Coffee"),
    ("GenuineIntel", 0x06, 0xA5, "avx2", 16, "Comet"),
    ("GenuineIntel", 0x06, 0x7E, "avx512", 16, "Ice Lake client"),
    ("GenuineIntel", 0x06, 0x8C, "avx512", 16, "Tiger Lake"),
    ("GenuineIntel", 0x06, 0xA7, "avx512", 16, "Rocket Lake"),
    ("GenuineIntel", 0x06, 0x97, "avx2", 16, "Alder Lake"),
    ("GenuineIntel", 0x06, 0xB7, "avx2", 16, "Raptor Lake"),
    ("GenuineIntel", 0x06, 0xAA, "avx2", 16, "Meteor Lake"),
    ("GenuineIntel", 0x06, 0xC6, "avx2", 16, "Arrow Lake"),
    ("GenuineIntel", 0x06, 0xBD, "avx2", 16, "Lunar Lake"),
    ("GenuineIntel", 0x06, 0x55, "avx512", 32, "Skylake-SP"),
    ("GenuineIntel", 0x06, 0x6A, "avx512", 32, "Ice Lake-SP"),
    ("GenuineIntel", 0x06, 0x8F, "avx512", 32, "Sapphire Rapids"),
    ("GenuineIntel", 0x06, 0xCF, "avx512", 32, "Emerald Rapids"),
    ("GenuineIntel", 0x06, 0xAD, "avx512", 32, "Granite Rapids"),
    ("GenuineIntel", 0x06, 0xAF, "avx2", 8, "Sierra Forest"),
]
XEON_FLAGS = ["sse2", "avx", "fma", "avx2", "avx512f"]


def inv(vendor, family, model, isa=XEON_FLAGS, **cpu):
    return {"cpu": {"vendor": vendor, "family": family, "model_number": model, "sockets": 1, "cores_per_socket": 2,
                    "isa": list(isa), "best_isa": "avx512" if "avx512f" in isa else "avx2", **cpu}}


@pytest.mark.parametrize("vendor,family,model,isa,fpc,name", PUBLISHED)
def test_x86_per_core_flop_per_cycle_matches_the_published_figure(vendor, family, model, isa, fpc, name):
    i = inv(vendor, family, model)
    assert name in microarch(i["cpu"]).name
    peak, why = cpu_peak(i, "fp64", 1, isa, 1.0)  # 1 core at 1 GHz: GFLOP/s = FLOP/cycle
    assert why is None and peak.value == fpc and peak.source == "computed", (name, peak)
    p32, _ = cpu_peak(i, "fp32", 1, isa, 1.0)
    assert p32.value == 2 * fpc


def test_a_cpu_the_table_does_not_know_gets_an_inferred_peak_with_its_arithmetic():
    i = inv("GenuineIntel", 0x06, 0xEE)  # no such part
    peak, why = cpu_peak(i, "fp64", 1, "avx512", 3.93)
    assert why is None and peak.source == "inferred"
    assert peak.value == pytest.approx(3.93 * 32)
    assert "2 FMA units assumed (not probed)" in peak.formula and "is not in the peak table" in peak.formula
    peak, why = cpu_peak(i, "int32", 1, "avx512", 3.93)
    assert peak is None and "enter the peak by hand" in why
    bare = inv("GenuineIntel", 0x06, 0xEE, isa=[])
    assert cpu_peak(bare, "fp64", 1, None, 3.9)[0] is None


def test_the_probe_sets_the_fma_units_and_the_datapath():
    one_unit = {"isa": {"avx512": {"flop_per_cycle": 15.2, "fma_units": 1, "cpu_share": 0.99},
                        "avx2": {"flop_per_cycle": 15.6, "fma_units": 2, "cpu_share": 0.99}}}
    peak, _ = cpu_peak(inv("GenuineIntel", 0x06, 0xEE, fma_probe=one_unit), "fp64", 1, "avx512", 1.0)
    assert peak.value == 16 and "256-bit datapath" in peak.formula  # 512-bit brings nothing over 256-bit
    two = {"isa": {"avx512": {"flop_per_cycle": 29.4, "fma_units": 2, "cpu_share": 0.99},
                   "avx2": {"flop_per_cycle": 15.9, "fma_units": 2, "cpu_share": 0.99}}}
    peak, _ = cpu_peak(inv("GenuineIntel", 0x06, 0xEE, fma_probe=two), "fp64", 2, "avx512", 3.93)
    assert peak.value == pytest.approx(2 * 3.93 * 32) and "29.4 FP64 FLOP/cycle measured" in peak.formula
    disturbed = {"isa": {"avx512": {"flop_per_cycle": 9.0, "fma_units": None, "cpu_share": 0.3}}}
    peak, _ = cpu_peak(inv("GenuineIntel", 0x06, 0xEE, fma_probe=disturbed), "fp64", 1, "avx512", 1.0)
    assert peak.value == 32 and "was disturbed (CPU share 0.3)" in peak.formula


def test_a_table_row_the_host_contradicts_gives_way_to_inference():
    # The KVM guest: an AVX-512 + AMX Xeon that reports model 167 (A7h, Rocket Lake's: 16 FLOP/cycle)
    guest = inv("GenuineIntel", 0x06, 0xA7, isa=[*XEON_FLAGS, "amx"])
    peak, _ = cpu_peak(guest, "fp64", 1, "avx512", 3.96)
    assert peak.source == "inferred" and peak.value == pytest.approx(3.96 * 32)
    assert "matches a table row, but the CPU has AMX, which Rocket Lake does not" in peak.formula
    probed = inv("GenuineIntel", 0x06, 0xA7, fma_probe={"isa": {"avx512": {"flop_per_cycle": 29.8, "fma_units": 2}}})
    assert cpu_peak(probed, "fp64", 1, "avx512", 1.0)[0].value == 32
