"""`pip install ./runner`, not editable, into a fresh virtualenv, offline: the build runs make on the kernel
sources (gcc and make only), the wheel carries hostbench_runner/_bin/hbk, and the installed `hostbench-runner`
finds that kernel (not the checkout's) and runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

RUNNER = Path(__file__).resolve().parents[1]
SHIPPED = ["pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "hostbench_runner", "kernels"]


def _copy_sources(dest: Path) -> None:
    """The runner's sources as a person would have them, without any build output of this checkout: runner/ and,
    beside it, common/ (the wheel carries a copy of the common package)."""
    ignore = shutil.ignore_patterns("build", "__pycache__", "*.pyc", "*.egg-info", "_bin")
    shutil.copytree(RUNNER.parent / "common", dest.parent / "common", ignore=ignore)
    dest.mkdir()
    for name in SHIPPED:
        src = RUNNER / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        else:
            shutil.copy2(src, dest / name)


def _run(argv: list[str], **kw) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(argv, capture_output=True, text=True, timeout=400, **kw)
    assert out.returncode == 0, f"{argv} exited {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def test_a_normal_install_builds_and_ships_the_kernel(tmp_path):
    src, dist, venv = tmp_path / "runner", tmp_path / "dist", tmp_path / "venv"
    _copy_sources(src)
    assert not (src / "kernels" / "build").exists()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HOSTBENCH_", "PIP_"))}
    env["PIP_NO_INDEX"] = "1"  # offline: nothing may come from a package index
    started = time.monotonic()
    # The build: setuptools (and wheel) from the test environment, as --no-build-isolation; make builds hbk.
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(src)],
         env=env, cwd=tmp_path)
    built = time.monotonic() - started
    wheels = list(dist.glob("hostbench_runner-*.whl"))
    assert len(wheels) == 1 and "none-any" not in wheels[0].name  # it holds a native binary
    # A fresh virtualenv and a normal (not editable) install of that wheel into it, by this pip (--python: the
    # new venv needs no pip of its own, which saves ensurepip's minute on a busy machine).
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], env=env)
    _run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-deps",
          str(wheels[0])], env=env, cwd=tmp_path)
    print(f"\nbuild with make: {built:.1f} s; venv + install: {time.monotonic() - started - built:.1f} s")

    env["PATH"] = f"{venv / 'bin'}:/usr/bin:/bin"  # no hbk on PATH
    version = _run([str(venv / "bin" / "hostbench-runner"), "--version"], env=env, cwd=tmp_path)
    assert version.stdout.startswith("hostbench-runner ")
    check = _run([str(venv / "bin" / "hostbench-runner"), "--check"], env=env, cwd=tmp_path)
    kernel = [line.split(": ", 1)[1] for line in check.stdout.splitlines() if line.startswith("kernel: ")]
    assert kernel and Path(kernel[0]).parts[-3:] == ("hostbench_runner", "_bin", "hbk"), check.stdout
    assert Path(kernel[0]).is_relative_to(venv), check.stdout
    assert "kernel cpu: ok" in check.stdout and "ok: the kernel is runnable" in check.stdout, check.stdout
    where = _run([str(venv / "bin" / "python"), "-c", "import hostbench_runner; print(hostbench_runner.__file__)"],
                 env=env, cwd=tmp_path)
    assert Path(where.stdout.strip()).is_relative_to(venv)
