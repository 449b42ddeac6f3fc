"""Builds the native kernels with `make` (gcc and make, nothing else) while the package is built, and ships the
binary inside it as hostbench_runner/_bin/hbk, where config.locate_kernel looks first; and ships a copy of the
common package (../common/hostbench_common: the experiment table, the kernels' schemas, the reference tools) beside
hostbench_runner, so that one wheel is all a host needs. So `pip install ./runner` (not editable) gives a runner
that finds its kernel and its table. An editable install runs from the tree and uses
kernels/build/hbk there (`make -C runner/kernels`), so it builds nothing here.

The kernels are built in the build's own temporary folder, never in kernels/build, so a build does not touch a
checkout's binary that tests may be running. CC and CFLAGS pass through to make as usual."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels"
# A checkout has common/ beside runner/; the server's installer tarball has hostbench_common/ beside setup.py.
COMMON = next((d for d in (HERE / "hostbench_common", HERE.parent / "common" / "hostbench_common")
               if (d / "experiments.py").is_file()), HERE.parent / "common" / "hostbench_common")


class BuildPyWithKernels(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        if not (COMMON / "experiments.py").is_file():
            raise SystemExit(f"hostbench-runner: the common package is missing at {COMMON}: build from a checkout "
                             "that has common/ beside runner/")
        shutil.copytree(COMMON, Path(self.build_lib) / "hostbench_common",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), dirs_exist_ok=True)
        build_temp = Path(self.get_finalized_command("build").build_temp).resolve()
        out = build_temp / "kernels"
        if shutil.which("make") is None:
            raise SystemExit("hostbench-runner: building the kernels needs `make` (and gcc): install them first")
        cmd = ["make", "-C", str(KERNELS), f"BUILD={out}", f"-j{os.cpu_count() or 1}", str(out / "hbk")]
        self.announce(f"building the kernels: {' '.join(cmd)}", level=2)
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)  # noqa: S603
        if proc.returncode != 0:
            tail = proc.stdout.decode(errors="replace")[-3000:]
            raise SystemExit(f"hostbench-runner: building the kernels failed (make exited {proc.returncode}); "
                             f"it needs gcc and make:\n{tail}")
        target = Path(self.build_lib) / "hostbench_runner" / "_bin" / "hbk"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(out / "hbk", target)
        target.chmod(0o755)


class BinaryDistribution(Distribution):
    """The wheel holds a native binary: tag it for this platform, not py3-none-any."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildPyWithKernels}, distclass=BinaryDistribution)
