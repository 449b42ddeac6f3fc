"""Theoretical peaks from the host inventory. A fact we cannot establish stays unknown (None, with a
note saying why); it is never guessed.

CPU peak per core = FMA pipes × min(ISA vector bits, datapath bits) / element bits × 2 (FMA = 2 FLOP)
                    × clock. The clock is the one the CPU kernel measured under load on this host
(dependent-add chain), else the maximum the OS reports (cpufreq), else unknown.
"""
from dataclasses import dataclass
from typing import Any

from app.hosts.schemas import Peak


@dataclass(frozen=True)
class Microarch:
    name: str
    fma_pipes: int  # FP FMA units per core
    datapath_bits: int  # widest native FMA datapath (AVX-512 on Zen 4 is double-pumped on 256 bits)
    int_add_pipes: int  # vector integer add units per core
    int_datapath_bits: int


# (vendor, family) → list of (model range, microarchitecture). Sources: AMD Software Optimization Guides
# for families 17h/19h/1Ah; Intel Optimization Reference Manual (port 0/1/5 FMA).
_TABLE: list[tuple[str, int, range, Microarch]] = [
    ("AuthenticAMD", 0x17, range(0x00, 0x30), Microarch("Zen / Zen+", 2, 128, 4, 128)),
    ("AuthenticAMD", 0x17, range(0x30, 0x100), Microarch("Zen 2", 2, 256, 4, 256)),
    ("AuthenticAMD", 0x19, range(0x00, 0x10), Microarch("Zen 3", 2, 256, 4, 256)),
    ("AuthenticAMD", 0x19, range(0x20, 0x60), Microarch("Zen 3", 2, 256, 4, 256)),
    ("AuthenticAMD", 0x19, range(0x10, 0x20), Microarch("Zen 4", 2, 256, 4, 256)),
    ("AuthenticAMD", 0x19, range(0x60, 0x100), Microarch("Zen 4", 2, 256, 4, 256)),
    # Zen 5 server (Turin, Turin dense) and desktop (Granite Ridge) have a native 512-bit FMA datapath;
    # the mobile parts (models 20h-2Fh, 60h-6Fh) keep 256 bits and are left unknown rather than guessed.
    ("AuthenticAMD", 0x1A, range(0x00, 0x20), Microarch("Zen 5", 2, 512, 4, 512)),
    ("AuthenticAMD", 0x1A, range(0x40, 0x50), Microarch("Zen 5", 2, 512, 4, 512)),
    ("GenuineIntel", 0x06, range(0x3C, 0x48), Microarch("Haswell/Broadwell", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0x4E, 0x4F), Microarch("Skylake client", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0x5E, 0x5F), Microarch("Skylake client", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0x55, 0x56), Microarch("Skylake-SP / Cascade Lake", 2, 512, 2, 512)),
    ("GenuineIntel", 0x06, range(0x6A, 0x6D), Microarch("Ice Lake-SP", 2, 512, 2, 512)),
    ("GenuineIntel", 0x06, range(0x8F, 0x90), Microarch("Sapphire Rapids", 2, 512, 2, 512)),
    ("GenuineIntel", 0x06, range(0xCF, 0xD0), Microarch("Emerald Rapids", 2, 512, 2, 512)),
]

_ISA_BITS = {"avx512": 512, "avx2": 256, "sse2": 128, "scalar": 64}


def microarch(cpu: dict[str, Any]) -> Microarch | None:
    vendor, family, model = cpu.get("vendor"), cpu.get("family"), cpu.get("model_number")
    if vendor is None or family is None or model is None:
        return None
    for v, f, models, arch in _TABLE:
        if v == vendor and f == family and model in models:
            return arch
    return None


def clock_ghz(cpu: dict[str, Any], measured_ghz: float | None) -> tuple[float | None, str]:
    if measured_ghz:
        return measured_ghz, "measured under load"
    if cpu.get("max_mhz"):
        return cpu["max_mhz"] / 1000.0, "maximum reported by cpufreq"
    return None, "unknown"


def cpu_peak(
    inventory: dict[str, Any], op: str, threads: int, isa: str | None, measured_ghz: float | None
) -> tuple[Peak | None, str | None]:
    """Peak for `threads` threads running `op` with `isa`; (None, why) when a fact is unknown."""
    cpu = inventory.get("cpu") or {}
    arch = microarch(cpu)
    if arch is None:
        return None, (
            f"microarchitecture of {cpu.get('vendor')} family {cpu.get('family')} model "
            f"{cpu.get('model_number')} is not in the peak table; enter the peak by hand"
        )
    ghz, clock_src = clock_ghz(cpu, measured_ghz)
    if ghz is None:
        return None, "CPU clock unknown until a CPU run measures it"
    cores = (cpu.get("sockets") or 1) * (cpu.get("cores_per_socket") or 0)
    if not cores:
        return None, "core count unknown"
    isa = isa or cpu.get("best_isa") or "scalar"
    bits = _ISA_BITS.get(isa, 64)
    used = min(threads, cores)
    if op in ("fp64", "fp32"):
        elem = 64 if op == "fp64" else 32
        if isa == "sse2" or isa == "scalar":
            per_cycle = 2 * (min(bits, arch.datapath_bits) // elem)  # separate mul and add pipes, 1 each
            how = f"{per_cycle} FLOP/cycle ({isa}: mul + add, no FMA)"
        else:
            per_cycle = arch.fma_pipes * (min(bits, arch.datapath_bits) // elem) * 2
            how = (
                f"{per_cycle} FLOP/cycle ({arch.fma_pipes} FMA pipes × {min(bits, arch.datapath_bits) // elem} "
                f"{op} lanes × 2, {arch.name}, {isa})"
            )
        unit = "GFLOP/s"
    elif op == "int32":
        per_cycle = arch.int_add_pipes * (min(bits, arch.int_datapath_bits) // 32)
        how = f"{per_cycle} int32 adds/cycle ({arch.int_add_pipes} vector ALUs × {min(bits, arch.int_datapath_bits) // 32} lanes, {arch.name}, {isa})"
        unit = "GIOP/s"
    else:
        return None, f"no peak model for op {op}"
    value = used * ghz * per_cycle
    formula = f"{used} core{'s' if used > 1 else ''} × {ghz:.3f} GHz ({clock_src}) × {how}"
    if threads > cores:
        formula += f"; {threads} threads share {cores} cores"
    return Peak(value=value, unit=unit, formula=formula, source="computed"), None
