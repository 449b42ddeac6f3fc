"""The CPU time a process's cgroup allows it, in CPUs (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us` /
`cpu.cfs_period_us`), the tightest along its path up to the hierarchy's root; None when no quota holds it. The
runner adds it to a kernel's start event (`cpu_quota`), so that a kernel held to half a CPU by its host's own
quota reads as that host's capacity, not as a measurement other processes disturbed
(docs/methodology/verdicts.md)."""
from __future__ import annotations

from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")


def _v2(path: str, root: Path) -> float | None:
    best: float | None = None
    d = root / path.lstrip("/")
    while True:
        try:
            quota, period = (d / "cpu.max").read_text().split()[:2]
            if quota != "max" and int(period) > 0:
                cpus = int(quota) / int(period)
                best = cpus if best is None else min(best, cpus)
        except (OSError, ValueError):
            pass
        if d == root or root not in d.parents:
            return best
        d = d.parent


def _v1(controllers: str, path: str, root: Path) -> float | None:
    best: float | None = None
    for name in (controllers, "cpu", "cpu,cpuacct", "cpuacct,cpu"):
        base = root / name
        if not (base / "cpu.cfs_quota_us").exists():
            continue
        d = base / path.lstrip("/")
        while True:
            try:
                quota = int((d / "cpu.cfs_quota_us").read_text())
                period = int((d / "cpu.cfs_period_us").read_text())
                if quota > 0 and period > 0:
                    best = quota / period if best is None else min(best, quota / period)
            except (OSError, ValueError):
                pass
            if d == base or base not in d.parents:
                return best
            d = d.parent
    return best


def cpu_quota(pid: int | str = "self", proc: Path = Path("/proc"), root: Path = CGROUP) -> float | None:
    try:
        lines = (proc / str(pid) / "cgroup").read_text().splitlines()
    except OSError:
        return None
    found = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":  # v2: the unified hierarchy (at the root, or beside v1's under unified/)
            v2_root = root if (root / "cgroup.controllers").exists() else root / "unified"
            found.append(_v2(path, v2_root))
        elif "cpu" in controllers.split(","):
            found.append(_v1(controllers, path, root))
    quotas = [q for q in found if q is not None]
    return min(quotas) if quotas else None
