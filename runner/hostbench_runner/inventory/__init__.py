"""Inventory collectors: small registered units, each a thin reader plus a pure parser.

A collector that fails turns its section into {"error": "..."} and never blocks the others or a
run. A fact that cannot be read is null ("unknown"), never guessed. Parsers take strings, so the
tests run them on fixture trees under runner/tests/fixtures/ (node_exporter's pattern).
"""

from __future__ import annotations

import logging
import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hostbench_common.hostfit import ISA_FLAGS

from .. import __version__
from . import cpu, disks, fma_probe, governor, gpus, memory, nics, os_info, virt

log = logging.getLogger("hostbench.inventory")


@dataclass(frozen=True)
class Collector:
    name: str
    read: Callable[..., Any]  # thin: file contents under a root ("/" on a live host)
    parse: Callable[[Any], Any]  # pure: a section (a dict; gpus: a list, or None when unknown)
    wants_work_dir: bool = False  # read(root, work_dir, disk_targets)


COLLECTORS: list[Collector] = [
    Collector("cpu", cpu.read, cpu.parse),
    Collector("memory", memory.read, memory.parse),
    Collector("disks", disks.read, disks.parse, wants_work_dir=True),
    Collector("nics", nics.read, nics.parse),
    Collector("os", os_info.read, os_info.parse),
    Collector("virtualization", virt.read, virt.parse),
    Collector("governor", governor.read, governor.parse),
    Collector("gpus", gpus.read, gpus.parse),
]


def run_collector(collector: Collector, root: Path, work_dir: Path | str | None = None,
                  disk_targets: Mapping[str, Path] | None = None) -> Any:
    try:
        raw = collector.read(root, work_dir, disk_targets) if collector.wants_work_dir else collector.read(root)
        return collector.parse(raw)
    except Exception as exc:  # one broken collector never blocks the rest
        log.warning("inventory collector %s failed: %s: %s", collector.name, type(exc).__name__, exc)
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}


def kernel_build(info: Any) -> dict[str, Any] | None:
    """`hbk --version` ({"v", "version", "build": {"cc", "cflags"}}) as the inventory shows it."""
    if not isinstance(info, dict):
        return None
    build: dict[str, Any] = info["build"] if isinstance(info.get("build"), dict) else {}

    def text(value: Any) -> str | None:
        return value[:500] if isinstance(value, str) and value else None

    return {
        "version": text(info.get("version")),
        "cc": text(build.get("cc")) or text(info.get("compiler")),
        "cflags": text(build.get("cflags")),
    }


def probe_isas(cpu_section: dict[str, Any]) -> list[str]:
    """The vector ISAs worth probing on this CPU (its flags), widest first."""
    have = set(cpu_section.get("isa") or [])
    x86 = [isa for isa in ("avx512", "avx2", "sse2") if set(ISA_FLAGS[isa]) <= have]
    arm = [isa for isa in ("sve", "neon") if set(ISA_FLAGS[isa]) <= have]
    return x86 or arm


def collect(root: Path | str = "/", kernel_info: Callable[[], Any] | None = None,
            work_dir: Path | str | None = None, kernel_bin: Path | str | None = None,
            probe_cache: Path | None = None, disk_targets: Mapping[str, Path] | None = None,
            probe_now: bool = True) -> dict[str, Any]:
    """Every collector's section, plus the runner's and the kernels' versions. `work_dir` is the
    runner's kernel work directory (its filesystem is reported under disks.work_dir); `disk_targets` the
    directories disk jobs may name (disks.targets: name, filesystem, device, free bytes). With `kernel_bin`,
    the CPU section gets the FMA issue-rate probe (fma_probe.py; about 0.4 s per vector ISA on a quiet core),
    taken from `probe_cache` when that holds a probe of this CPU by this kernel build. Without `probe_now`, only
    a kept probe is used (the runner probes later, in the background: hostbench_runner.probing)."""
    root = Path(root)
    inventory: dict[str, Any] = {c.name: run_collector(c, root, work_dir, disk_targets) for c in COLLECTORS}
    cpu_section = inventory.get("cpu")
    build: Any = None
    if kernel_info is not None:
        try:
            build = kernel_build(kernel_info())
        except Exception as exc:
            build = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    if kernel_bin is not None and isinstance(cpu_section, dict) and "error" not in cpu_section:
        try:
            key = fma_probe.cache_key(cpu_section, build)
            probe = (fma_probe.cached_run(kernel_bin, probe_isas(cpu_section), probe_cache, key) if probe_now
                     else fma_probe.read_cache(probe_cache, key))
            if probe is not None or probe_now:
                cpu_section["fma_probe"] = probe
        except Exception as exc:  # a probe never blocks registration
            cpu_section["fma_probe"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    inventory["runner"] = {"version": __version__, "python": platform.python_version()}
    inventory["kernel"] = build
    return inventory
