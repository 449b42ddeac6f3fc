"""Peaks for non-CPU rows and the physical floors below which a latency cannot be real.
A fact we cannot establish stays unknown (None, with the reason); it is never guessed."""
from typing import Any

from app.experiments.registry import RUNS
from app.hosts.schemas import Peak

# Below these, a latency is not a measurement but a bug (a skipped operation, a clock error, a cache hit
# counted as a device access). Each says why. Keyed by the result figure (as the kernel declares it, flattened:
# latency_us.p50 -> latency_p50_us): a kernel that declares the figure gets its floor. direct_only: a floor of a
# device, which a buffered row's page cache may beat.
FLOORS: dict[str, tuple[float, str, bool]] = {
    "ns_per_load": (0.5, "a load-to-use latency under 0.5 ns would need an 8 GHz core with a 4-cycle L1", False),
    "latency_p50_us": (1.0, "a socket round trip is at least four system calls: under 1 µs is not possible", False),
    "lat_p50_us": (2.0, "a direct I/O through the kernel's block layer to a device takes more than 2 µs", True),
}

GPU_PEAK_KEYS = {"fp32_fma": ("fp32_gflops", "gpu_fp32"), "fp64_fma": ("fp64_gflops", "gpu_fp64"),
                 "int32": ("int32_giops", None), "dram_bw": ("dram_gbs", "gpu_bw")}


def _override(overrides: dict[str, Any], key: str | None) -> Peak | None:
    o = overrides.get(key) if key else None
    if not o:
        return None
    when = f" on {o['at'][:16].replace('T', ' ')} UTC" if o.get("at") else ""
    return Peak(value=o["value"], unit=o["unit"], source="user", since=o.get("at"),
                formula=f"entered by {o.get('by') or 'a person'}{when}{': ' + o['note'] if o.get('note') else ''}")


def other_peak(experiment: str, op: str | None, unit: str, inventory: dict[str, Any],
               kernel_info: dict[str, Any], overrides: dict[str, Any]) -> tuple[Peak | None, str | None]:
    """The host-wide peak for a memory, disk, network or GPU row in `unit`, or (None, why): what the run kind's
    figures are set against is the experiment table's `peak`."""
    run = RUNS.get(experiment)
    peak = run.peak if run is not None else ""
    if peak == "memory":
        if unit != "MB/s":
            return None, None  # latency rows have a floor, not a peak
        if (p := _override(overrides, "memory_bw")) is not None:
            return p, None
        mem = inventory.get("memory") or {}
        channels, mts = mem.get("channels"), mem.get("speed_mts")
        if channels and mts:
            return Peak(value=channels * mts * 8.0, unit="MB/s", source="computed",
                        formula=f"{channels} channels × {mts} MT/s × 8 bytes"), None
        return None, ("memory peak unknown: this host's firmware does not expose DIMM channels and speed; "
                      "enter it on the Hosts page (Peaks: Enter)")
    if peak == "disk":
        if (p := _override(overrides, "disk_bw")) is not None and unit == "MB/s":
            return p, None
        return None, "disks report no throughput specification; enter it on the Hosts page (Peaks: Enter)"
    if peak == "nic":
        if (p := _override(overrides, "nic_bw")) is not None and unit == "Mbit/s":
            return p, None
        return None, "link speed unknown: enter the NIC's speed on the Hosts page (Peaks: Enter)"
    if peak == "loopback":
        return None, "loopback has no link speed: it measures the kernel's network stack, not a NIC"
    if peak == "gpu" and op in GPU_PEAK_KEYS:
        figure, key = GPU_PEAK_KEYS[op]
        if (p := _override(overrides, key)) is not None:
            return p, None
        value = (kernel_info.get("peak_at_measured_clock") or {}).get(figure)
        if isinstance(value, int | float) and value > 0:
            return Peak(value=float(value), unit=unit, source="reported",
                        formula=str(kernel_info.get("peak_formula") or "from the device's attributes")), None
        return None, f"GPU peak for {op} unknown on this device"
    return None, None


def below_floor(extra: dict[str, float], params: dict[str, Any], direct: bool | None = None) -> str | None:
    """direct: whether the row's I/O bypassed the page cache (its io_mode); None: the run's direct parameter."""
    for key, (floor, why, direct_only) in FLOORS.items():
        if direct_only and not (params.get("direct") if direct is None else direct):
            continue  # a buffered read may be served by the page cache in well under a microsecond
        if key in extra and extra[key] < floor:
            return f"{key} = {extra[key]:.3g} is below the physical floor {floor:g}: {why}"
    return None
