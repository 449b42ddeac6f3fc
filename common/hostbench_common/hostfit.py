"""Whether a host can run a run's parameters, judged from the inventory its runner sent: the API refuses a job a
picked host cannot run (a 422 naming the parameter) before anything is queued. The host refuses again on its own
(the kernel: an ISA the CPU lacks ends with error code unsupported; the runner: a disk target it was not given);
this is the early, named refusal, never the only one. A fact the inventory does not state is not guessed: the
check then passes and the host decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .experiments import DISK_TARGET_WORK, MEMORY_BLOCK_OPS, MEMORY_STREAM_OPS, Run
from .peaks import readable_inventory

# The CPU flags (inventory cpu.isa, as runner/hostbench_runner/inventory/cpu.py names them) each choice of a
# kernel's `isa` needs (the runner's FMA probe picks the ISAs to probe by them too).
ISA_FLAGS: dict[str, tuple[str, ...]] = {
    "avx512": ("avx512f",), "avx2": ("avx2",), "sse2": ("sse2",), "neon": ("neon",), "sve": ("sve",),
    "scalar": (),
}


def isa_needs(kernel: str, isa: str, op: Any) -> tuple[str, ...]:
    """The flags `isa` needs for `op`: the cpu kernel's FP chains at AVX2 are FMAs (cpu.c, lacks())."""
    flags = ISA_FLAGS.get(isa, (isa,))
    if kernel == "cpu" and isa == "avx2" and op != "int32":
        flags += ("fma",)
    return flags


def _isa_refusal(run: Run, params: Mapping[str, Any], inventory: Any, host: str) -> str | None:
    isa, param = params.get("isa"), run.param("isa")
    if param is None or not isinstance(isa, str) or isa == "auto":
        return None
    flags = readable_inventory(inventory).get("cpu", {}).get("isa")
    if not flags:  # the inventory lists no ISA flags: the kernel decides on the host
        return None
    op = params.get("op")
    missing = [f for f in isa_needs(run.kernel, isa, op) if f not in flags]
    if not missing:
        return None
    choices = [c for c in run.param_schema(param).get("enum", []) if c != "auto"]
    can = [c for c in choices if all(f in flags for f in isa_needs(run.kernel, c, op))]
    return (f"isa {isa} needs {', '.join(missing)}, which the CPU of host {host} lacks (its ISA flags: "
            f"{', '.join(flags)}); give isa auto or one it has: {', '.join(can) or 'none'}")


# The memory kernel measures DRAM only with a working set of at least this many times its L3 (memory.c); smaller
# is refused there unless allow_cache.
DRAM_FACTOR = 4


def _ints(value: Any) -> list[int]:
    values = value if isinstance(value, list) else [value]
    return [v for v in values if isinstance(v, int) and not isinstance(v, bool) and v > 0]


def _working_set(op: Any, params: Mapping[str, Any]) -> tuple[str, int, int] | None:
    """(parameter, its value, the smallest working set it gives in bytes) of a block or STREAM op that sets its
    size, as the kernel sizes it (memory.c mem_region_bytes: each thread's region is at least one block, in
    whole blocks); None when the kernel sizes it itself (0) or the op has none."""
    if op in MEMORY_STREAM_OPS:
        size = params.get("array_size")
        return ("array_size", size, 8 * size) if isinstance(size, int) and size > 0 else None  # 8-byte doubles
    size = params.get("buffer_bytes")
    if op not in MEMORY_BLOCK_OPS or not isinstance(size, int) or size <= 0:
        return None
    sets = [-(-max(-(-size // t), b) // b) * b * t for b in _ints(params.get("blocks")) for t in
            _ints(params.get("threads"))]
    return ("buffer_bytes", size, min(sets)) if sets else None


def _cache_refusal(run: Run, params: Mapping[str, Any], inventory: Any, host: str) -> tuple[str, str] | None:
    """A working set smaller than 4x the host's L3 without allow_cache. The kernel counts the L3 of every CPU it
    runs on, at least one cache's worth, so what is refused here it refuses too."""
    if run.kernel != "memory" or params.get("allow_cache") is True:
        return None
    l3 = readable_inventory(inventory).get("cpu", {}).get("l3_bytes")
    found = _working_set(params.get("op"), params)
    if l3 is None or found is None or found[2] >= DRAM_FACTOR * l3:
        return None
    name, size, nbytes = found
    return name, (f"{name} {size}: a working set of {nbytes} B is smaller than {DRAM_FACTOR} x the L3 of host "
                  f"{host} ({DRAM_FACTOR} x {l3} B), so it would measure a cache, not DRAM; give allow_cache true "
                  "to measure the cache on purpose (each result then says the level it fits in), or 0 to size it "
                  "past the caches")


def disk_targets(inventory: Any) -> list[str]:
    """The names of the disk targets a host's runner advertises (inventory disks.targets)."""
    disks = inventory.get("disks") if isinstance(inventory, dict) else None
    targets = disks.get("targets") if isinstance(disks, dict) else None
    if not isinstance(targets, list):
        return []
    return [t["name"] for t in targets if isinstance(t, dict) and isinstance(t.get("name"), str)]


def _target_refusal(run: Run, params: Mapping[str, Any], host: str, inventory: Any) -> str | None:
    """A disk target the host's runner does not offer. Unlike an ISA, an inventory that lists none is a host
    that offers none: its runner refuses every name but work."""
    name = params.get("target")
    if "target" not in run.runner_params or not isinstance(name, str) or name == DISK_TARGET_WORK:
        return None
    offered = disk_targets(inventory)
    if name in offered:
        return None
    return (f"target {name}: host {host} offers no disk target of that name; it offers: "
            f"{', '.join([DISK_TARGET_WORK, *offered])} (a runner's owner configures them on the runner: "
            "--disk-target NAME=PATH or HOSTBENCH_DISK_TARGETS)")


def gpus(inventory: Any) -> list[Any] | None:
    """The GPUs a host's inventory lists (the runner's inventory/gpus.py: those the CUDA kernel can use), None when
    it does not say (a runner from before, or a PCI bus it could not read)."""
    found = inventory.get("gpus") if isinstance(inventory, Mapping) else None
    return found if isinstance(found, list) else None


def host_refusal(run: Run, inventory: Any, host: str) -> str | None:
    """Why the host `host` cannot run `run` at all, whatever its parameters (a GPU run on a host with no GPU), else
    None. An inventory that does not say is not a host without one: the kernel decides there."""
    if run.needs_gpu and gpus(inventory) == []:
        return (f"host {host} has no GPU: its inventory lists no NVIDIA GPU the CUDA kernel could use; pick a host "
                "with one")
    return None


def _device_refusal(run: Run, params: Mapping[str, Any], inventory: Any, host: str) -> str | None:
    device, found = params.get("device"), gpus(inventory)
    if not run.needs_gpu or not found or not isinstance(device, int) or device < len(found):
        return None
    return (f"device {device}: host {host} has {len(found)} GPU{'' if len(found) == 1 else 's'} (devices 0 to "
            f"{len(found) - 1})")


def refusal(run: Run, params: Mapping[str, Any], inventory: Any, host: str) -> tuple[str, str] | None:
    """(parameter, why) when the host `host` with this inventory cannot run a run of `run` with `params` (one
    run's: a fan_out list already split), else None."""
    why = _isa_refusal(run, params, inventory, host)
    if why is not None:
        return "isa", why
    why = _target_refusal(run, params, host, inventory)
    if why is not None:
        return "target", why
    why = _device_refusal(run, params, inventory, host)
    if why is not None:
        return "device", why
    return _cache_refusal(run, params, inventory, host)
