"""CPU: /proc/cpuinfo and /sys/devices/system/cpu (topology, caches of cpu0, base and max clock).

The clock under load is no file: the CPU kernel measures it and the backend takes it from there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .files import list_dir, read_text, read_value

SYS_CPU = "sys/devices/system/cpu"

# (cpuinfo flag, name we publish), in rising order of capability.
X86_ISA = [
    ("sse", "sse"), ("sse2", "sse2"), ("pni", "sse3"), ("ssse3", "ssse3"), ("sse4_1", "sse4_1"),
    ("sse4_2", "sse4_2"), ("avx", "avx"), ("fma", "fma"), ("fma4", "fma4"), ("avx2", "avx2"),
    ("avx512f", "avx512f"), ("avx512dq", "avx512dq"), ("avx512cd", "avx512cd"),
    ("avx512bw", "avx512bw"), ("avx512vl", "avx512vl"), ("avx512_vnni", "avx512_vnni"),
    ("avx512_bf16", "avx512_bf16"), ("avx512_fp16", "avx512_fp16"), ("amx_tile", "amx"),
]
ARM_ISA = [("asimd", "neon"), ("asimdhp", "neon_fp16"), ("sve", "sve"), ("sve2", "sve2"), ("sme", "sme")]

# best_isa in the CPU kernel's own vocabulary (`hbk cpu --describe`, parameter isa), so the backend's
# peak model and the kernel agree; vector width in bits (None: the ISA does not fix it).
X86_BEST = [("avx512f", "avx512", 512), ("avx2", "avx2", 256), ("sse2", "sse2", 128)]
ARM_BEST = [("sve2", "sve2", None), ("sve", "sve", None), ("asimd", "neon", 128)]

ARM_IMPLEMENTERS = {
    0x41: "ARM", 0x42: "Broadcom", 0x43: "Cavium", 0x46: "Fujitsu", 0x48: "HiSilicon",
    0x4E: "NVIDIA", 0x50: "APM", 0x51: "Qualcomm", 0x61: "Apple", 0xC0: "Ampere",
}


def read(root: Path) -> dict[str, Any]:
    topology: dict[str, dict[str, str | None]] = {}
    for name in list_dir(root, SYS_CPU):
        if re.fullmatch(r"cpu\d+", name):
            topology[name] = {
                "package": read_value(root, f"{SYS_CPU}/{name}/topology/physical_package_id"),
                "core": read_value(root, f"{SYS_CPU}/{name}/topology/core_id"),
            }
    caches = []
    for index in list_dir(root, f"{SYS_CPU}/cpu0/cache"):
        if re.fullmatch(r"index\d+", index):
            base = f"{SYS_CPU}/cpu0/cache/{index}"
            caches.append({
                key: read_value(root, f"{base}/{key}")
                for key in ("level", "type", "size", "shared_cpu_list")
            })
    return {
        "cpuinfo": read_text(root, "proc/cpuinfo"),
        "online": read_value(root, f"{SYS_CPU}/online"),
        "topology": topology,
        "caches": caches,
        "max_freq_khz": read_value(root, f"{SYS_CPU}/cpu0/cpufreq/cpuinfo_max_freq"),
        "amd_pstate_max_freq_khz": read_value(root, f"{SYS_CPU}/cpu0/cpufreq/amd_pstate_max_freq"),
        "base_freq_khz": read_value(root, f"{SYS_CPU}/cpu0/cpufreq/base_frequency"),  # intel_pstate
        "cppc_nominal_mhz": read_value(root, f"{SYS_CPU}/cpu0/acpi_cppc/nominal_freq"),
    }


def parse_cpuinfo(text: str) -> tuple[list[dict[str, str]], dict[str, str]]:
    """Per-processor blocks, and the lines outside any processor block (ARM puts some there)."""
    blocks: list[dict[str, str]] = []
    extra: dict[str, str] = {}
    current: dict[str, str] = {}

    def close_block() -> None:
        if "processor" in current:
            blocks.append(dict(current))
        else:
            extra.update(current)
        current.clear()

    for line in text.splitlines():
        if not line.strip():
            close_block()
            continue
        key, sep, value = line.partition(":")
        if sep:
            current[key.strip().lower()] = value.strip()
    close_block()
    return blocks, extra


def cpu_list_count(text: str | None) -> int | None:
    """'0-3,8,10-11' -> 7."""
    if not text:
        return None
    count = 0
    for part in text.strip().split(","):
        lo, _, hi = part.partition("-")
        count += (int(hi) - int(lo) + 1) if hi else 1
    return count


def size_bytes(text: str | None) -> int | None:
    if not text:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)i?B?\s*", text, re.IGNORECASE)
    if not m:
        return None
    return int(m[1]) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m[2].upper()]


def _int(text: str | None, base: int = 10) -> int | None:
    try:
        return int(text, base) if text is not None else None
    except ValueError:
        return None


def _positive(value: int | None, per_mhz: int, source: str) -> tuple[float | None, str | None]:
    if value is None or value <= 0:
        return None, None
    return value / per_mhz, source


def base_clock(raw: dict[str, Any], model: str | None) -> tuple[float | None, str | None]:
    """The nominal clock as the OS or the vendor's model string states it; None when neither does."""
    mhz, source = _positive(_int(raw.get("base_freq_khz")), 1000, "cpufreq base_frequency")
    if mhz is None:
        mhz, source = _positive(_int(raw.get("cppc_nominal_mhz")), 1, "acpi_cppc nominal_freq")
    if mhz is None and model:
        # Intel prints its nominal clock in the brand string ("... CPU E5-2620 v4 @ 2.10GHz").
        m = re.search(r"@\s*(\d+(?:\.\d+)?)\s*GHz\s*$", model)
        if m:
            mhz, source = round(float(m[1]) * 1000, 3), "model name"
    return mhz, source


def parse(raw: dict[str, Any]) -> dict[str, Any]:
    blocks, extra = parse_cpuinfo(raw.get("cpuinfo") or "")
    first = blocks[0] if blocks else {}
    merged = {**extra, **first}

    flags_text = merged.get("flags")
    features_text = merged.get("features")
    flags = set(flags_text.split()) if flags_text is not None else None
    features = set(features_text.split()) if features_text is not None else None

    vendor = merged.get("vendor_id")
    implementer = _int(merged.get("cpu implementer"), 0)
    if vendor is None and implementer is not None:
        vendor = ARM_IMPLEMENTERS.get(implementer, f"implementer {implementer:#x}")
    model = merged.get("model name") or merged.get("hardware") or None

    threads = len(blocks) or cpu_list_count(raw.get("online"))

    sockets = cores = None
    pairs = {(b.get("physical id"), b.get("core id")) for b in blocks}
    if blocks and all(p[0] is not None and p[1] is not None for p in pairs):
        sockets = len({p[0] for p in pairs})
        cores = len(pairs)
    else:
        topo = raw.get("topology") or {}
        tpairs = {(t.get("package"), t.get("core")) for t in topo.values()}
        if tpairs and all(p[0] is not None and p[1] is not None for p in tpairs):
            sockets = len({p[0] for p in tpairs})
            cores = len(tpairs)

    isa: list[str] = []
    best_isa: str | None = None
    vector_bits: int | None = None
    best: tuple[str, int | None]
    fma = None
    if flags is not None:
        isa = [name for flag, name in X86_ISA if flag in flags]
        best = next(((b, w) for flag, b, w in X86_BEST if flag in flags), ("scalar", 64))
        best_isa, vector_bits = best
        fma = "fma" in flags or "fma4" in flags
    elif features is not None:
        isa = [name for flag, name in ARM_ISA if flag in features]
        best = next(((b, w) for flag, b, w in ARM_BEST if flag in features), ("scalar", 64))
        best_isa, vector_bits = best
        fma = "asimd" in features  # AArch64 Advanced SIMD includes fused multiply-add

    caches: dict[str, int | None] = {"l1d_bytes": None, "l1i_bytes": None, "l2_bytes": None, "l3_bytes": None}
    for cache in raw.get("caches") or []:
        level, ctype = cache.get("level"), (cache.get("type") or "").lower()
        key = {("1", "data"): "l1d_bytes", ("1", "instruction"): "l1i_bytes",
               ("2", "unified"): "l2_bytes", ("3", "unified"): "l3_bytes"}.get((level, ctype))
        if key:
            caches[key] = size_bytes(cache.get("size"))

    max_mhz, max_source = _positive(_int(raw.get("max_freq_khz")), 1000, "cpufreq cpuinfo_max_freq")
    if max_mhz is None:
        max_mhz, max_source = _positive(_int(raw.get("amd_pstate_max_freq_khz")), 1000, "amd_pstate_max_freq")
    base_mhz, base_source = base_clock(raw, model)
    mhz = merged.get("cpu mhz")
    try:
        cpuinfo_mhz = round(float(mhz), 3) if mhz else None
    except ValueError:
        cpuinfo_mhz = None

    return {
        "model": model,
        "vendor": vendor,
        "family": _int(merged.get("cpu family")),
        "model_number": _int(merged.get("model")) if flags is not None else _int(merged.get("cpu part"), 0),
        "stepping": _int(merged.get("stepping")),
        "sockets": sockets,
        "cores": cores,  # physical cores, all sockets together
        "cores_per_socket": cores // sockets if cores and sockets and cores % sockets == 0 else None,
        "threads": threads,  # logical CPUs
        "threads_per_core": threads // cores if threads and cores and threads % cores == 0 else None,
        "isa": isa,
        "best_isa": best_isa,
        "vector_bits": vector_bits,
        "fma": fma,
        "fma_units": None,  # not discoverable from flags; the kernel measures it
        "base_mhz": base_mhz,
        "base_mhz_source": base_source,
        "max_mhz": max_mhz,
        "max_mhz_source": max_source,
        "cpuinfo_mhz": cpuinfo_mhz,  # the current clock as cpuinfo reported it, not a peak
        **caches,
    }
