"""The CPU quota a kernel runs under, read from its cgroup (v2 cpu.max, v1 cfs quota), the tightest on its path;
and a real one: a process moved into a cgroup held to half a CPU (as root, where cgroups can be made)."""
import subprocess
import sys
from pathlib import Path

import pytest

from hostbench_runner.cgroupquota import cpu_quota


def _tree(tmp: Path, cgroup: str, files: dict[str, str]) -> tuple[Path, Path]:
    proc, root = tmp / "proc", tmp / "cg"
    (proc / "7").mkdir(parents=True)
    (proc / "7" / "cgroup").write_text(cgroup)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return proc, root


def test_v2_the_tightest_quota_on_the_path_counts(tmp_path):
    proc, root = _tree(tmp_path, "0::/a/b\n", {"cgroup.controllers": "cpu", "a/cpu.max": "150000 100000\n",
                                               "a/b/cpu.max": "max 100000\n"})
    assert cpu_quota(7, proc, root) == 1.5
    (root / "a/b/cpu.max").write_text("50000 100000\n")
    assert cpu_quota(7, proc, root) == 0.5


def test_v1_and_hybrid_and_none(tmp_path):
    proc, root = _tree(tmp_path, "4:memory:/x\n1:cpu:/hb\n0::/\n",
                       {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n",
                        "cpu/hb/cpu.cfs_quota_us": "25000\n", "cpu/hb/cpu.cfs_period_us": "100000\n"})
    assert cpu_quota(7, proc, root) == 0.25
    (root / "cpu/hb/cpu.cfs_quota_us").write_text("-1\n")
    assert cpu_quota(7, proc, root) is None
    assert cpu_quota(8, proc, root) is None  # no such process


def test_a_real_cgroup_at_half_a_cpu():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "cli"))
    from hostbench_stack.cpulimit import CpuLimit, why_not

    why = why_not()
    if why:
        pytest.skip(why)
    with CpuLimit("quota-test", 0.5) as limit:
        p = subprocess.Popen(["sleep", "5"])
        try:
            limit.add(p.pid)
            assert cpu_quota(p.pid) == 0.5
        finally:
            p.kill()
            p.wait()
