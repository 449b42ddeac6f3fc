"""Inventory collectors: small registered units, each a thin reader plus a pure parser.

A collector that fails turns its section into {"error": "..."} and never blocks the others or a
run. A fact that cannot be read is null ("unknown"), never guessed. Parsers take strings, so the
tests run them on fixture trees under runner/tests/fixtures/ (node_exporter's pattern).
"""

from __future__ import annotations

import logging
import platform
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from . import cpu, disks, governor, memory, nics, os_info, virt

log = logging.getLogger("hostbench.inventory")


@dataclass(frozen=True)
class Collector:
    name: str
    read: Callable[..., Any]  # thin: file contents under a root ("/" on a live host)
    parse: Callable[[Any], dict[str, Any]]  # pure
    wants_work_dir: bool = False  # read(root, work_dir)


COLLECTORS: list[Collector] = [
    Collector("cpu", cpu.read, cpu.parse),
    Collector("memory", memory.read, memory.parse),
    Collector("disks", disks.read, disks.parse, wants_work_dir=True),
    Collector("nics", nics.read, nics.parse),
    Collector("os", os_info.read, os_info.parse),
    Collector("virtualization", virt.read, virt.parse),
    Collector("governor", governor.read, governor.parse),
]


def run_collector(collector: Collector, root: Path, work_dir: Path | str | None = None) -> dict[str, Any]:
    try:
        raw = collector.read(root, work_dir) if collector.wants_work_dir else collector.read(root)
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


def collect(root: Path | str = "/", kernel_info: Callable[[], Any] | None = None,
            work_dir: Path | str | None = None) -> dict[str, Any]:
    """Every collector's section, plus the runner's and the kernels' versions. `work_dir` is the
    runner's kernel work directory (its filesystem is reported under disks.work_dir)."""
    root = Path(root)
    inventory: dict[str, Any] = {c.name: run_collector(c, root, work_dir) for c in COLLECTORS}
    inventory["runner"] = {"version": __version__, "python": platform.python_version()}
    if kernel_info is not None:
        try:
            inventory["kernel"] = kernel_build(kernel_info())
        except Exception as exc:
            inventory["kernel"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    else:
        inventory["kernel"] = None
    return inventory
