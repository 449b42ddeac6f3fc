"""Theoretical CPU peaks from the host inventory, declared once: the API (backend/app/hosts/peaks.py gives the
result its pydantic Peak) and the CLI's `bench cpu` compute them here. A fact we cannot establish stays unknown
(None, with a note saying why); it is never guessed.

CPU peak per core = FMA pipes × min(ISA vector bits, datapath bits) / element bits × 2 (FMA = 2 FLOP)
                    × clock. The clock is the one the CPU kernel measured under load on this host
(peak_clock_ghz), else the maximum the OS reports (cpufreq), else unknown. The kernel times a chain of
dependent integer adds twice: alone (the scalar-chain clock) and with vector FMAs of the run's width issued
beside it (the vector-loaded clock, clock_vector_ghz): a core that lowers its clock for wide vector work (Intel
under AVX-512) runs the FP kernel at the second, so an FP peak at a vector width uses it when the run has one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

# Where a computed peak comes from: the table's row for this core, or the core's ISA flags and FMA probe.
Source = Literal["computed", "inferred"]


@dataclass(frozen=True)
class Peak:
    """A theoretical peak for the threads of a run: value in unit, and the arithmetic that gave it."""

    value: float
    unit: str  # GFLOP/s or GIOP/s
    formula: str
    source: Source


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
    # AMD family 17h: Zen / Zen+ (Naples, Summit/Pinnacle Ridge, Raven Ridge): 2 x 128-bit FMA (FP0/FP1);
    # Zen 2 (Rome, Matisse, Renoir, Van Gogh, Mendocino): 2 x 256-bit FMA. Hygon Dhyana is Zen.
    ("AuthenticAMD", 0x17, range(0x00, 0x30), Microarch("Zen / Zen+", 2, 128, 4, 128)),
    ("AuthenticAMD", 0x17, range(0x30, 0x100), Microarch("Zen 2", 2, 256, 4, 256)),
    ("HygonGenuine", 0x18, range(0x00, 0x100), Microarch("Hygon Dhyana (Zen)", 2, 128, 4, 128)),
    # 19h: Zen 3 (Milan 01h, Vermeer 21h, Rembrandt 44h, Cezanne 50h) and Zen 4 (Genoa 11h, Raphael 61h,
    # Phoenix 74h-78h, Bergamo/Siena A0h): 2 x 256-bit FMA; Zen 4 double-pumps AVX-512 on them.
    ("AuthenticAMD", 0x19, range(0x00, 0x10), Microarch("Zen 3", 2, 256, 4, 256)),
    ("AuthenticAMD", 0x19, range(0x20, 0x60), Microarch("Zen 3", 2, 256, 4, 256)),
    ("AuthenticAMD", 0x19, range(0x10, 0x20), Microarch("Zen 4", 2, 256, 4, 256)),
    ("AuthenticAMD", 0x19, range(0x60, 0x100), Microarch("Zen 4", 2, 256, 4, 256)),
    # 1Ah: Zen 5 server (Turin 02h, Turin dense 11h), desktop (Granite Ridge 44h) and Strix Halo (70h) have a
    # native 512-bit FMA datapath; the mobile Strix Point (20h-2Fh) and Krackan (60h-6Fh) keep 256 bits.
    ("AuthenticAMD", 0x1A, range(0x00, 0x20), Microarch("Zen 5", 2, 512, 4, 512)),
    ("AuthenticAMD", 0x1A, range(0x40, 0x50), Microarch("Zen 5", 2, 512, 4, 512)),
    ("AuthenticAMD", 0x1A, range(0x70, 0x80), Microarch("Zen 5 (Strix Halo)", 2, 512, 4, 512)),
    ("AuthenticAMD", 0x1A, range(0x20, 0x30), Microarch("Zen 5 mobile (Strix Point)", 2, 256, 4, 256)),
    ("AuthenticAMD", 0x1A, range(0x60, 0x70), Microarch("Zen 5 mobile (Krackan)", 2, 256, 4, 256)),
    # Intel family 6. Haswell/Broadwell client and server (3Ch-47h, 3Fh, 4Fh, 56h): 2 x 256-bit FMA (ports 0, 1).
    ("GenuineIntel", 0x06, range(0x3C, 0x48), Microarch("Haswell/Broadwell", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0x4F, 0x50), Microarch("Broadwell-EP", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0x56, 0x57), Microarch("Broadwell-DE", 2, 256, 3, 256)),
    # Skylake client and its refreshes (Kaby/Coffee/Whiskey/Comet Lake: 4Eh, 5Eh, 8Eh, 9Eh, A5h, A6h): 2 x 256.
    ("GenuineIntel", 0x06, range(0x4E, 0x4F), Microarch("Skylake client", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0x5E, 0x5F), Microarch("Skylake client", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0x8E, 0x8F), Microarch("Kaby/Coffee/Whiskey Lake", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0x9E, 0x9F), Microarch("Kaby/Coffee Lake", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0xA5, 0xA7), Microarch("Comet Lake", 2, 256, 3, 256)),
    # Sunny/Willow/Cypress Cove clients (Ice Lake 7Dh/7Eh, Tiger Lake 8Ch/8Dh, Rocket Lake A7h): AVX-512 on one
    # fused 512-bit FMA (ports 0+1), two at 256 bits: the same 16 FP64 FLOP/cycle either way, a 256-bit datapath.
    ("GenuineIntel", 0x06, range(0x7D, 0x7F), Microarch("Ice Lake client", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0x8C, 0x8E), Microarch("Tiger Lake", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0xA7, 0xA8), Microarch("Rocket Lake", 2, 256, 3, 256)),
    # Hybrid clients: Alder Lake (97h, 9Ah), Raptor Lake (B7h, BAh, BFh), Meteor Lake (AAh, ACh), Arrow Lake
    # (C5h, C6h), Lunar Lake (BDh): the P-cores' 2 x 256-bit FMA; the E-cores (Gracemont, Crestmont, Skymont)
    # do half of that per cycle, so the table's figure is the P-cores' and the name says so.
    ("GenuineIntel", 0x06, range(0x97, 0x98), Microarch("Alder Lake (P-core figure)", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0x9A, 0x9B), Microarch("Alder Lake (P-core figure)", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0xB7, 0xB8), Microarch("Raptor Lake (P-core figure)", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0xBA, 0xBB), Microarch("Raptor Lake (P-core figure)", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0xBF, 0xC0), Microarch("Raptor Lake (P-core figure)", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0xAA, 0xAB), Microarch("Meteor Lake (P-core figure)", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0xAC, 0xAD), Microarch("Meteor Lake (P-core figure)", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0xC5, 0xC7), Microarch("Arrow Lake (P-core figure)", 2, 256, 3, 256)),
    ("GenuineIntel", 0x06, range(0xBD, 0xBE), Microarch("Lunar Lake (P-core figure)", 2, 256, 3, 256)),
    # Servers with two 512-bit FMA units per core (ports 0+1 fused, and port 5): Skylake-SP / Cascade Lake /
    # Cooper Lake (55h; Xeon Bronze, Silver and some Gold 5xxx have only the fused one: half), Ice Lake-SP
    # (6Ah, 6Ch), Sapphire Rapids (8Fh), Emerald Rapids (CFh), Granite Rapids (ADh, AEh).
    ("GenuineIntel", 0x06, range(0x55, 0x56), Microarch("Skylake-SP / Cascade Lake", 2, 512, 2, 512)),
    ("GenuineIntel", 0x06, range(0x6A, 0x6D), Microarch("Ice Lake-SP", 2, 512, 2, 512)),
    ("GenuineIntel", 0x06, range(0x8F, 0x90), Microarch("Sapphire Rapids", 2, 512, 2, 512)),
    ("GenuineIntel", 0x06, range(0xCF, 0xD0), Microarch("Emerald Rapids", 2, 512, 2, 512)),
    ("GenuineIntel", 0x06, range(0xAD, 0xAF), Microarch("Granite Rapids", 2, 512, 2, 512)),
    # E-core servers: Sierra Forest (AFh), Grand Ridge (B6h): 2 x 128-bit FMA (a 256-bit op takes both).
    ("GenuineIntel", 0x06, range(0xAF, 0xB0), Microarch("Sierra Forest (E-cores)", 2, 128, 2, 128)),
    ("GenuineIntel", 0x06, range(0xB6, 0xB7), Microarch("Grand Ridge (E-cores)", 2, 128, 2, 128)),
]

# ARM cores: (implementer as the runner names /proc/cpuinfo's "CPU implementer", "CPU part") → core. Every row
# has 128-bit FP/SIMD pipes, each doing one FMA per cycle; Neoverse V1 executes a 256-bit SVE op on two of its
# four, so SVE (any vector length) and NEON reach the same FLOP/cycle there and the row counts four 128-bit pipes.
# Sources: Arm Neoverse N1/N2/V1/V2 Software Optimization Guides (pipes V0/V1, or V0-V3, all with FMA and ASIMD
# integer add); AmpereOne: Ampere's product brief (two 128-bit vector units). Ampere Altra / Altra Max and AWS
# Graviton2 are Neoverse N1, Graviton3 V1, Graviton4 and NVIDIA Grace V2, Azure Cobalt 100 N2.
_ARM_TABLE: dict[tuple[str, int], Microarch] = {
    ("ARM", 0xD0C): Microarch("Neoverse N1", 2, 128, 2, 128),
    ("ARM", 0xD49): Microarch("Neoverse N2", 2, 128, 2, 128),
    ("ARM", 0xD40): Microarch("Neoverse V1", 4, 128, 4, 128),
    ("ARM", 0xD4F): Microarch("Neoverse V2", 4, 128, 4, 128),
    ("Ampere", 0xAC3): Microarch("AmpereOne", 2, 128, 2, 128),
    ("Ampere", 0xAC4): Microarch("AmpereOne (Ampere1A)", 2, 128, 2, 128),
}

# The inventory fields the peak, limit and verdict code reads (and the caches a memory result is set against, and
# hostfit.py judges a job by), with the type each must have. The inventory is the
# runner's free-form JSON (stored as sent); a field of another type is left out of what these computations see,
# so a malformed one makes a peak unknown instead of making GET /api/hosts a 500 (a heartbeat whose "cpu" was a
# list did).
_COUNT = "count"  # an int > 0
_READ: dict[str, dict[str, str]] = {
    "cpu": {"vendor": "str", "family": "int", "model_number": "int", "sockets": _COUNT, "cores_per_socket": _COUNT,
            "threads": _COUNT, "max_mhz": "positive", "best_isa": "str", "isa": "strs", "fma_probe": "dict",
            "l1d_bytes": _COUNT, "l2_bytes": _COUNT, "l3_bytes": _COUNT},
    "memory": {"channels": _COUNT, "speed_mts": "positive"},
}


def _typed(value: Any, kind: str) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == _COUNT:
        return isinstance(value, int) and not isinstance(value, bool) and value > 0
    if kind == "positive":
        return number and value > 0
    if kind == "fraction":
        return number and 0 <= value <= 1
    if kind == "strs":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, dict)


def _probe(probe: dict[str, Any]) -> dict[str, Any]:
    isa = probe.get("isa")
    if not isinstance(isa, dict):
        return {}
    keep = {}
    for name, at in isa.items():
        if isinstance(at, dict):
            keep[name] = {k: v for k, v in at.items()
                          if (k == "fma_units" and _typed(v, _COUNT))
                          or (k in ("flop_per_cycle", "cpu_share") and _typed(v, "positive"))
                          or (k == "neighbours_busy" and _typed(v, "fraction"))}
    return {"isa": keep}


def readable_inventory(inventory: Any) -> dict[str, Any]:
    """The inventory as the peak, limit and verdict code may read it: the sections and fields above, each of its
    type or left out. Everything else is dropped from this view (the stored inventory is unchanged)."""
    out: dict[str, Any] = {}
    if not isinstance(inventory, dict):
        return out
    for name, fields in _READ.items():
        section = inventory.get(name)
        if isinstance(section, dict):
            out[name] = {k: section[k] for k, kind in fields.items() if k in section and _typed(section[k], kind)}
            if isinstance(out[name].get("fma_probe"), dict):
                out[name]["fma_probe"] = _probe(out[name]["fma_probe"])
    return out


_ISA_BITS = {"avx512": 512, "avx2": 256, "sse2": 128, "scalar": 64,
             # SVE's length is the CPU's (128-2048 bits); every ARM row's pipes are 128 bits, which caps it
             "neon": 128, "sve": 128, "sve2": 128}


def microarch(cpu: dict[str, Any]) -> Microarch | None:
    vendor, family, model = cpu.get("vendor"), cpu.get("family"), cpu.get("model_number")
    if family is None and vendor is not None and model is not None:  # ARM: model_number is the "CPU part"
        return _ARM_TABLE.get((vendor, model))
    if vendor is None or family is None or model is None:
        return None
    for v, f, models, arch in _TABLE:
        if v == vendor and f == family and model in models:
            return arch
    return None


# The widest vector an x86 core can issue, from the ISA names the runner publishes (inventory/cpu.py). ARM cores
# are not inferred: their FP pipes range from one 64-bit (Cortex-A53) to four 128-bit (Neoverse V1) per core.
_WIDEST = [("avx512f", 512, "avx512"), ("avx2", 256, "avx2"), ("avx", 256, "avx2"), ("sse2", 128, "sse2")]
# When no probe ran: two FMA units, every x86 core with FMA since Haswell and every Arm Neoverse N core has at
# least that many at its full width (the AVX-512 Xeons with one fused unit have half: then the inferred peak is
# an upper bound, never below what the core can do, so a figure is never wrongly marked above it).
ASSUMED_FMA_UNITS = 2


def inferred_arch(cpu: dict[str, Any]) -> tuple[Microarch, str] | None:
    """A peak model for a CPU the table does not know, from its ISA flags and, where the runner ran it, the
    FMA issue-rate probe (inventory cpu.fma_probe: FLOP/cycle of independent FMA chains at each vector width,
    from the CPU kernel). (Microarch, how it was inferred) or None when the flags say nothing."""
    isa = set(cpu.get("isa") or [])
    widest = next(((bits, name) for flag, bits, name in _WIDEST if flag in isa), None)
    if widest is None:
        return None
    bits, isa_name = widest
    if "fma" not in isa and bits > 128:
        return None  # AVX without FMA (Sandy/Ivy Bridge): mul and add pipes, not modelled
    probe = (cpu.get("fma_probe") or {}).get("isa") or {}
    at = probe.get(isa_name) or {}
    units, datapath = ASSUMED_FMA_UNITS, bits
    if isinstance(at.get("fma_units"), int) and at["fma_units"] > 0:
        units = at["fma_units"]
        how = (f"probe at {isa_name}: {at['flop_per_cycle']:.1f} FP64 FLOP/cycle measured = "
               f"{at['flop_per_cycle'] / (2 * bits // 64):.2f} × {2 * bits // 64} per {bits}-bit FMA → {units} "
               f"FMA unit{'s' if units != 1 else ''}")
        narrower = probe.get("avx2") if isa_name == "avx512" else None
        if narrower and isinstance(narrower.get("flop_per_cycle"), (int, float)) \
                and at["flop_per_cycle"] < 1.5 * narrower["flop_per_cycle"]:
            # 512-bit vectors bring no more FLOP/cycle than 256-bit ones: a 256-bit datapath (double-pumped)
            datapath = 256
            units = max(1, round(at["flop_per_cycle"] / 8))
            how += f"; avx2 reached {narrower['flop_per_cycle']:.1f}: a 256-bit datapath, {units} units at 256 bits"
    elif at:
        busy = at.get("neighbours_busy")
        why = f"CPU share {at.get('cpu_share')}" + (f", other CPUs {busy:.0%} busy" if busy else "")
        how = (f"{units} FMA units assumed: the probe at {isa_name} was disturbed ({why}); "
               "an upper bound for cores with fewer")
    else:
        how = f"{units} FMA units assumed (not probed): an upper bound for cores with fewer"
    flags = ", ".join(sorted(isa & {"avx512f", "avx2", "avx", "fma", "sse2", "neon", "sve"}))
    return Microarch(f"inferred from ISA flags ({flags}); {how}", units, datapath, 0, 0), how


def contradicted(arch: Microarch, cpu: dict[str, Any]) -> str | None:
    """Why the table's row cannot be this host's core (a hypervisor may report a model number of another
    part), or None. AMX exists only on server cores with two 512-bit FMA units; a probe that measured more
    FP64 FLOP/cycle than the row allows (10 % margin) outranks the row."""
    isa = set(cpu.get("isa") or [])
    if "amx" in isa and arch.datapath_bits < 512:
        return f"the CPU has AMX, which {arch.name} does not"
    for name, at in ((cpu.get("fma_probe") or {}).get("isa") or {}).items():
        bits = _ISA_BITS.get(name)
        fpc = at.get("flop_per_cycle") if isinstance(at, dict) else None
        if bits and bits > 128 and isinstance(fpc, (int, float)):
            table = arch.fma_pipes * (min(bits, arch.datapath_bits) // 64) * 2
            if fpc > 1.1 * table:
                return f"the probe measured {fpc:.1f} FP64 FLOP/cycle at {name}, above {arch.name}'s {table}"
    return None


@dataclass(frozen=True)
class RunClock:
    """The clocks one CPU run measured, each the highest of the one before the run and those right after its
    phases (peak_clock_ghz): the scalar-chain clock, and the vector-loaded one (None: the run has none: an int32
    or scalar run, or a kernel from before it was measured)."""

    scalar_ghz: float | None
    vector_ghz: float | None = None


# How the formula names an ISA whose FMAs loaded the vector clock.
_ISA_TITLE = {"avx512": "AVX-512", "avx2": "AVX2", "sse2": "SSE2", "neon": "NEON", "sve": "SVE"}
# The scalar and vector-loaded clocks differ when they are this far apart (the clock's own run-to-run noise on
# an idle core is well under 1 %): the formula then gives both.
CLOCKS_DIFFER = 0.02


def clocks_differ(scalar_ghz: float, vector_ghz: float) -> str | None:
    """A sentence giving both clocks when they differ by more than CLOCKS_DIFFER, else None."""
    if abs(scalar_ghz - vector_ghz) <= CLOCKS_DIFFER * vector_ghz:
        return None
    return (f"the clocks differ: scalar chain {scalar_ghz:.3f} GHz, vector-loaded {vector_ghz:.3f} GHz "
            f"({(vector_ghz / scalar_ghz - 1) * 100:+.1f} %)")


def _run_clock(measured: RunClock, op: str, isa: str) -> tuple[float | None, str, str | None]:
    """(GHz, which clock, the sentence when the two differ) for an op at an ISA: the vector-loaded clock for FP
    ops at a vector width when the run measured one, else the scalar chain's."""
    vector_op = op in ("fp64", "fp32") and isa in _ISA_TITLE
    if vector_op and measured.vector_ghz:
        differ = clocks_differ(measured.scalar_ghz, measured.vector_ghz) if measured.scalar_ghz else None
        return measured.vector_ghz, f"vector-loaded clock, {_ISA_TITLE[isa]}", differ
    if measured.scalar_ghz:
        return measured.scalar_ghz, "scalar-chain clock" + (", the run has no vector-loaded one" if vector_op
                                                             else ""), None
    return None, "unknown", None


def clock_ghz(cpu: dict[str, Any], measured_ghz: float | None) -> tuple[float | None, str]:
    if measured_ghz:
        return measured_ghz, "measured under load"
    if cpu.get("max_mhz"):
        return cpu["max_mhz"] / 1000.0, "maximum reported by cpufreq"
    return None, "unknown"


def cpu_peak(
    inventory: dict[str, Any], op: str, threads: int, isa: str | None, measured_ghz: float | RunClock | None
) -> tuple[Peak | None, str | None]:
    """Peak for `threads` threads running `op` with `isa`; (None, why) when a fact is unknown. measured_ghz: a
    run's clocks (peak_clock_ghz: the formula says which one it used), or a clock measured under load."""
    cpu = inventory.get("cpu") or {}
    arch = microarch(cpu)
    source: Source = "computed"
    contra = contradicted(arch, cpu) if arch is not None else None
    if contra:
        arch = None  # the table's row does not describe this host: infer from what it has and does
    if arch is None:
        guess = inferred_arch(cpu)
        if guess is None or op == "int32":
            what = "its ISA flags say nothing of its vector units" if guess is None else \
                "int32 add pipes are not inferred from flags"
            return None, (
                f"microarchitecture of {cpu.get('vendor')} family {cpu.get('family')} model "
                f"{cpu.get('model_number')} is not in the peak table and {what}; enter the peak by hand "
                "(Hosts page, Enter)"
            )
        arch, source = guess[0], "inferred"
    isa = isa or cpu.get("best_isa") or "scalar"
    differ = None
    if isinstance(measured_ghz, RunClock):
        ghz, clock_src, differ = _run_clock(measured_ghz, op, isa)
        if ghz is None:
            ghz, clock_src = clock_ghz(cpu, None)
    else:
        ghz, clock_src = clock_ghz(cpu, measured_ghz)
    if ghz is None:
        return None, "CPU clock unknown until a CPU run measures it"
    cores = (cpu.get("sockets") or 1) * (cpu.get("cores_per_socket") or 0)
    if not cores:
        return None, "core count unknown"
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
        lanes = min(bits, arch.int_datapath_bits) // 32
        how = f"{per_cycle} int32 adds/cycle ({arch.int_add_pipes} vector ALUs × {lanes} lanes, {arch.name}, {isa})"
        unit = "GIOP/s"
    else:
        return None, f"no peak model for op {op}"
    value = used * ghz * per_cycle
    formula = f"{used} core{'s' if used > 1 else ''} × {ghz:.3f} GHz ({clock_src}) × {how}"
    if differ:
        formula += f"; {differ}"
    if threads > cores:
        formula += f"; {threads} threads share {cores} cores"
    if source == "inferred":
        formula += (f"; {cpu.get('vendor')} family {cpu.get('family')} model {cpu.get('model_number')} "
                    + (f"matches a table row, but {contra}" if contra else "is not in the peak table"))
    return Peak(value=value, unit=unit, formula=formula, source=source), None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def run_clock_ghz(kernel_info: dict[str, Any], threads: int, vector: bool = False) -> float | None:
    """The clock the kernel measured under load: on one CPU for one thread; with every allowed CPU busy
    at once (clock_ghz_all_cpus, lower where turbo depends on how many cores are active) for more. vector: the
    vector-loaded clock (clock_vector_ghz, clock_vector_ghz_all_cpus) instead of the scalar chain's."""
    key = "clock_vector_ghz" if vector else "clock_ghz"
    one, every = _number(kernel_info.get(key)), _number(kernel_info.get(f"{key}_all_cpus"))
    return every if threads > 1 and every is not None else one


def peak_clock_ghz(kernel_info: dict[str, Any], threads: int, reps: list[dict[str, Any]]) -> RunClock | None:
    """The clocks a CPU peak is computed at (cpu_peak picks one for its op and ISA): of each kind, the higher of
    the one measured before the run (run_clock_ghz) and those measured right after each phase (clock_after_ghz,
    clock_after_vector_ghz). The host's boost moves with its load, so the run may have had a higher clock than
    its start: a peak is never set below what the core ran at under that load. The kinds are not mixed: a
    scalar-chain clock above the vector-loaded one is not what the core ran the vector work at."""

    def highest(before: float | None, after: str) -> float | None:
        good = [c for c in [before, *(_number(r.get(after)) for r in reps)] if c is not None]
        return max(good) if good else None

    scalar = highest(run_clock_ghz(kernel_info, threads), "clock_after_ghz")
    vector = highest(run_clock_ghz(kernel_info, threads, vector=True), "clock_after_vector_ghz")
    if scalar is None and vector is None:
        return None
    return RunClock(scalar, vector)
