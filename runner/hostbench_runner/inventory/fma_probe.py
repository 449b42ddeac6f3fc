"""FMA issue-rate probe: how many FP64 FLOP per cycle one core completes at each vector width.

The CPU kernel's fp64 loop is independent FMA chains (12 accumulators: more than latency x units on any
core), so its GFLOP/s divided by the clock it measured is the core's FLOP/cycle at that ISA. Dividing by
the FLOP of one FMA at that width (2 x lanes) gives the FMA units, rounded. The clock is the one the kernel
timed with vector FMAs of that width beside its add chain (clock_vector_ghz, docs/methodology/cpu.md): an Intel
core drops to a lower licence clock under heavy AVX-512 work, and dividing by its scalar clock landed at 0.92 x 2
on one Xeon. A kernel without the vector-loaded clock (an older build) falls back to the scalar one, which
rounding mostly absorbs. CPU time lost to other processes is taken out (value / cpu_share).

A full CPU share is not enough: an SMT sibling (a hyperthread of the same core, which a VM's vCPUs may be without
saying so) shares the core's FMA units. Found in CI on a 2-vCPU Zen 3 guest: with the other vCPU busy (type
checks beside the tests), the probe kept a CPU share of 0.98 and measured 11.1 FP64 FLOP/cycle at AVX2 -> "1 FMA
unit" on a core that has 2. So each try also measures how busy the machine's other CPUs were meanwhile
(/proc/stat, less the probe's own CPU time); above NEIGHBOURS_BUSY_MAX the try is disturbed like a lost share.

The peak uses it for a CPU its table does not know (hostbench_common/peaks.py inferred_arch), and to
overrule a table row the probe contradicts. About 0.4 s of one core per ISA (up to 3 tries when disturbed),
when the inventory is collected with a kernel: `bench cpu`, and the runner (once per CPU and kernel build: the
figures are kept in the runner's state directory, so a restart costs nothing). The runner never probes before it
registers: it registers with the probe it kept, if any, and probes after, before it takes its first run
(hostbench_runner.probing); a disturbed probe is kept too, marked (no FMA units where it was disturbed), and taken
again at a later start that finds the machine quiet. HOSTBENCH_FMA_PROBE=0 turns it off.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import time
from pathlib import Path
from typing import Any

from hostbench_common.process import child_setup

PROBE_ISAS = ("avx512", "avx2", "sse2", "neon", "sve")
LANES64 = {"avx512": 8, "avx2": 4, "sse2": 2, "neon": 2, "sve": 2}
DURATION_S = 0.3
QUIET_SHARE = 0.9  # below it a VM's stolen time (counted as the guest thread's CPU time) skews FLOP/cycle low
TRIES = 3  # per ISA, until one is quiet; the best FLOP/cycle counts
# the other CPUs' mean busy fraction during a try above which the try says nothing about the FMA units
NEIGHBOURS_BUSY_MAX = 0.25
METHOD = ("hbk cpu --op fp64 --threads 1, 0.3 s per ISA: FP64 FLOP/cycle = GFLOP/s / cpu_share / the clock "
          "timed under that width's FMAs "
          "(the kernel's independent FMA chains); FMA units = round(FLOP/cycle / (2 x FP64 lanes)), "
          f"only when the other CPUs were at most {NEIGHBOURS_BUSY_MAX:.0%} busy meanwhile (an SMT sibling "
          "shares the units)")


def parse(isa: str, stdout: str) -> dict[str, Any] | None:
    """One probe's figures from the kernel's JSON lines, or None when it did not measure."""
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    start = next((e for e in events if e.get("type") == "start"), None)
    result = next((e for e in events if e.get("type") == "result"), None)
    if not start or not result or not result.get("verified"):
        return None
    # the clock under this width's vector load where the kernel timed one, else its scalar chain's
    clocks = [c for c in (start.get("clock_vector_ghz"), result.get("clock_after_vector_ghz"))
              if isinstance(c, (int, float)) and c > 0]
    clocks = clocks or [c for c in (start.get("clock_ghz"), result.get("clock_after_ghz"))
                        if isinstance(c, (int, float)) and c > 0]
    share = result.get("cpu_share")
    if not clocks or not isinstance(share, (int, float)) or share <= 0.05:
        return None
    ghz = max(clocks)
    fpc = float(result["value"]) / min(1.0, float(share)) / ghz
    per_fma = 2 * LANES64[isa] if start.get("fma") and share >= QUIET_SHARE else None
    return {
        "gflops": round(float(result["value"]), 3), "cpu_share": round(float(share), 3), "clock_ghz": round(ghz, 3),
        "flop_per_cycle": round(fpc, 2), "fma": bool(start.get("fma")),
        # None when the probe was disturbed (the backend then assumes, and says so) or the ISA has no FMA
        "fma_units": max(1, round(fpc / per_fma)) if per_fma else None,
    }


def machine_busy_s() -> float | None:
    """CPU seconds every CPU of this machine has spent busy since boot (/proc/stat's first line, all but idle and
    iowait), or None where it cannot be read."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        ticks = [int(v) for v in fields[1:8]]
    except (OSError, ValueError, IndexError):
        return None
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def neighbours_busy(busy0: float | None, busy1: float | None, own_cpu_s: float, wall_s: float,
                    cpus: int) -> float | None:
    """The other CPUs' mean busy fraction over wall_s: the machine's busy CPU time less the probe's own, over the
    other CPUs; None where unknown (no /proc/stat) and 0 on a one-CPU machine (no neighbour to share a core)."""
    if busy0 is None or busy1 is None or wall_s <= 0:
        return None
    if cpus <= 1:
        return 0.0
    return round(min(1.0, max(0.0, (busy1 - busy0 - own_cpu_s) / (wall_s * (cpus - 1)))), 3)


def kernel_isas(kernel_bin: Path | str, timeout_s: float) -> list[str]:
    """The vector ISAs `hbk cpu --describe` lets a run ask for (its isa parameter); [] when it has none."""
    try:
        proc = subprocess.run([str(kernel_bin), "cpu", "--describe"], capture_output=True, text=True,
                              timeout=timeout_s, check=False, preexec_fn=child_setup(os.getpid()))
        enum = json.loads(proc.stdout)["parameters"]["properties"]["isa"]["enum"]
    except (OSError, subprocess.TimeoutExpired, ValueError, KeyError, TypeError):
        return []
    return [isa for isa in enum if isa in LANES64] if isinstance(enum, list) else []


def run(kernel_bin: Path | str | None, available: list[str] | None = None,
        timeout_s: float = 20) -> dict[str, Any] | None:
    """Probe every ISA both the CPU (`available`) and the kernel (its --describe) support; None without a
    kernel that can be asked for an ISA."""
    if not kernel_bin or not Path(kernel_bin).exists():
        return None
    can = kernel_isas(kernel_bin, timeout_s)
    out: dict[str, Any] = {}
    for isa in available or PROBE_ISAS:
        if isa not in can:
            continue
        argv = [str(kernel_bin), "cpu", "--op", "fp64", "--isa", isa, "--threads", "1", "--repeats", "1",
                "--duration_s", str(DURATION_S), "--warmup_s", "0.1", "--no_sampler", "true"]
        best: dict[str, Any] | None = None
        for _ in range(TRIES):
            busy0, own0, t0 = machine_busy_s(), _children_cpu_s(), time.monotonic()
            try:
                # dies with the runner (a runner killed while it probes leaves no kernel behind)
                proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False,
                                      preexec_fn=child_setup(os.getpid()))
            except (OSError, subprocess.TimeoutExpired):
                break
            fig = parse(isa, proc.stdout) if proc.returncode == 0 else None
            if fig is None:
                break
            fig["neighbours_busy"] = neighbours_busy(busy0, machine_busy_s(), _children_cpu_s() - own0,
                                                     time.monotonic() - t0, os.cpu_count() or 1)
            if (fig["neighbours_busy"] or 0.0) > NEIGHBOURS_BUSY_MAX:
                fig["fma_units"] = None  # a sibling may have shared the core's FMA units
            if best is None or _quiet(fig) > _quiet(best) or fig["flop_per_cycle"] > best["flop_per_cycle"]:
                best = fig
            if _quiet(fig):
                break
        if best is not None:
            out[isa] = best
    return {"method": METHOD, "isa": out} if out else None


def _quiet(fig: dict[str, Any]) -> bool:
    return fig["cpu_share"] >= QUIET_SHARE and (fig.get("neighbours_busy") or 0.0) <= NEIGHBOURS_BUSY_MAX


def cache_key(cpu: dict[str, Any], kernel_build: Any) -> str:
    """What a probe depends on: the CPU as the OS reports it (model, family, flags, cores) and the kernel's build."""
    facts = {k: cpu.get(k) for k in ("vendor", "model", "family", "model_number", "stepping", "flags",
                                     "cores_per_socket", "sockets", "threads")}
    text = json.dumps({"cpu": facts, "kernel": kernel_build}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def quiet(probe: dict[str, Any] | None) -> bool:
    """Every ISA measured undisturbed: its FMA units told (or the ISA has no FMA)."""
    return bool(probe and probe.get("isa")) and all(
        v.get("fma_units") is not None or not v.get("fma") for v in (probe or {}).get("isa", {}).values())


def read_cache(cache: Path | None, key: str) -> dict[str, Any] | None:
    """The probe `cache` holds for this key (quiet, or disturbed and so marked: its ISAs without FMA units), or
    None."""
    if cache is None:
        return None
    try:
        kept = json.loads(cache.read_text())
    except (OSError, ValueError):
        return None
    if isinstance(kept, dict) and kept.get("key") == key and isinstance(kept.get("probe"), dict):
        probe: dict[str, Any] = kept["probe"]
        return probe
    return None


def keep(cache: Path | None, key: str, probe: dict[str, Any] | None) -> bool:
    """Write `probe` to `cache` unless it says less than what is there: a quiet probe always replaces, a disturbed
    one only an absent, other-key or disturbed one (its figures stay marked disturbed: no FMA units where it was,
    so a peak inferred from it says it assumed them). True when written."""
    if cache is None or not probe or not probe.get("isa"):
        return False
    if not quiet(probe) and quiet(read_cache(cache, key)):
        return False
    tmp = cache.with_name(cache.name + ".tmp")
    try:
        tmp.write_text(json.dumps({"key": key, "probe": probe, "disturbed": not quiet(probe)}))
        os.replace(tmp, cache)
    except OSError:
        return False  # a full or read-only state directory: probe again next time
    return True


def cached_run(kernel_bin: Path | str, available: list[str] | None, cache: Path | None,
               key: str) -> dict[str, Any] | None:
    """run(), unless `cache` holds a quiet probe with this key (then that one). A fresh probe is kept (keep()); a
    disturbed one too, marked, and tried again the next time."""
    kept = read_cache(cache, key)
    if quiet(kept):
        return kept
    fresh = run(kernel_bin, available)
    keep(cache, key, fresh)
    return fresh if fresh or kept is None else kept


def others_busy(sample_s: float = 1.0) -> float | None:
    """How busy this machine's other CPUs are now (their mean busy fraction over `sample_s`; this process idle
    meanwhile): a probe taken now would be disturbed above NEIGHBOURS_BUSY_MAX."""
    busy0, t0 = machine_busy_s(), time.monotonic()
    time.sleep(sample_s)
    cpus = os.cpu_count() or 1
    if busy0 is None:
        return None
    busy1 = machine_busy_s()
    # no probe ran: the whole machine's busy time counts, over all CPUs but the one a probe would take
    return neighbours_busy(busy0, busy1, 0.0, time.monotonic() - t0, cpus)
