"""A CPU quota for a group of processes: a cgroup of its own, held to a share of one CPU (cgroup v2 `cpu.max`,
or v1 `cpu.cfs_quota_us` in the `cpu` hierarchy). The starved-machine tests (issue 28) start the stack, or a runner
alone, under one, as on a small, busy host. Needs root (or a delegated cgroup); `why_not()` says why one cannot be
made here."""
import os
import time
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")
PERIOD_US = 100_000


def _v2_parent() -> Path | None:
    """Where a cgroup v2 child can go: the root of a unified hierarchy (as root), with the cpu controller."""
    if not (CGROUP / "cgroup.controllers").exists():
        return None
    return CGROUP


def _v1_parent() -> Path | None:
    for name in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
        p = CGROUP / name
        if (p / "cpu.cfs_quota_us").exists():
            return p
    return None


def why_not() -> str | None:
    """None when a CPU-limited cgroup can be made here, else why not (in words)."""
    try:
        with CpuLimit("probe", 0.5):
            pass
    except (OSError, RuntimeError) as exc:
        return f"no CPU-limited cgroup here: {exc}"
    return None


class CpuLimit:
    """`share` of one CPU (0.25: a quarter) for every process added and every process they start."""

    def __init__(self, name: str, share: float, weight: int | None = None):
        """`weight`: the group's CPU weight against the other processes (v1 cpu.shares, 1024 a nice-0 process; v2
        cpu.weight, 100); unset, the default: the whole group weighs one nice-0 process."""
        self.share = share
        self.weight = weight
        self.path: Path | None = None
        self.name = f"hostbench-{name}-{os.getpid()}"

    def __enter__(self) -> "CpuLimit":
        quota = max(1000, int(self.share * PERIOD_US))
        v2 = _v2_parent()
        if v2 is not None:
            if "cpu" not in (v2 / "cgroup.controllers").read_text().split():
                raise RuntimeError(f"cgroup v2 at {v2} has no cpu controller")
            if "cpu" not in (v2 / "cgroup.subtree_control").read_text().split():
                (v2 / "cgroup.subtree_control").write_text("+cpu")
            self.path = v2 / self.name
            self.path.mkdir(exist_ok=True)
            (self.path / "cpu.max").write_text(f"{quota} {PERIOD_US}")
            if self.weight is not None:
                (self.path / "cpu.weight").write_text(str(max(1, min(10000, self.weight * 100 // 1024))))
            return self
        v1 = _v1_parent()
        if v1 is None:
            raise RuntimeError(f"neither cgroup v2 ({CGROUP}/cgroup.controllers) nor a v1 cpu hierarchy "
                               f"({CGROUP}/cpu/cpu.cfs_quota_us) is mounted")
        self.path = v1 / self.name
        self.path.mkdir(exist_ok=True)
        (self.path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (self.path / "cpu.cfs_quota_us").write_text(str(quota))
        if self.weight is not None:
            (self.path / "cpu.shares").write_text(str(self.weight))
        return self

    def add(self, pid: int) -> None:
        """Move a process (all its threads) into the group; what it starts from then on is in it too."""
        assert self.path is not None
        (self.path / "cgroup.procs").write_text(str(pid))

    def pids(self) -> list[int]:
        assert self.path is not None
        return [int(x) for x in (self.path / "cgroup.procs").read_text().split()]

    def release(self) -> None:
        """Move every process out of the group, back to the hierarchy's root (unlimited)."""
        assert self.path is not None
        for pid in self.pids():
            try:
                (self.path.parent / "cgroup.procs").write_text(str(pid))
            except OSError:
                pass  # it exited meanwhile

    def stat(self) -> dict[str, int]:
        """The group's cpu.stat: nr_throttled (periods the quota ran out), throttled time, ..."""
        assert self.path is not None
        out = {}
        for line in (self.path / "cpu.stat").read_text().splitlines():
            key, _, value = line.partition(" ")
            out[key] = int(value)
        return out

    def __exit__(self, *exc: object) -> None:
        if self.path is None:
            return
        self.release()
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except OSError:
                self.release()
                time.sleep(0.1)
