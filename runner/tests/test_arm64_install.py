"""The runner's install command on an arm64 host, as far as an x86-64 machine can show it: the kernel build that
install/install.sh runs (its own make line, on the sources as the server's tarball holds them) with Debian's
aarch64 cross compiler as the host's cc, no x86-only flag anywhere in it, an aarch64 hbk out of it, and the
runner's kernel check (`python -m hostbench_runner --check`, the installer's last gate) passing on that hbk run
under qemu-user. The ARM kernels' own results are checked in the kernels suite (kernels/tests/check_arm64.py).

The cross tools are installed by `./hostbench test` (stack/hostbench_stack/build.py arm64_tools); without them
this skips and says which is missing."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from test_install_script import SCRIPT, _tarball

CROSS_CC = "aarch64-linux-gnu-gcc"
SYSROOT = Path("/usr/aarch64-linux-gnu")
EM_AARCH64 = 183
X86_ONLY = re.compile(r"(?<!\S)-m(?:avx\S*|sse\S*|fma|bmi\S*|tune=\S*x86\S*"
                      r"|arch=(?:x86-64\S*|haswell|skylake\S*|znver\S*))(?!\S)")


def _missing() -> str | None:
    if platform.machine() == "aarch64":
        return "this host is aarch64: the install tests here run the native build"
    if shutil.which(CROSS_CC) is None:
        return f"{CROSS_CC} is not installed (./hostbench test installs gcc-aarch64-linux-gnu as root)"
    if not (SYSROOT / "include" / "stdio.h").exists():
        return f"no aarch64 C library in {SYSROOT} (./hostbench test installs libc6-dev-arm64-cross as root)"
    if not (shutil.which("qemu-aarch64-static") or shutil.which("qemu-aarch64")):
        return "qemu-user is not installed (./hostbench test installs qemu-user-static as root)"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


def _install_make_line() -> list[str]:
    """The installer's make command for the kernels, read from the script (one definition: the script's)."""
    text = SCRIPT.read_text()
    lines = [line.strip() for line in text.splitlines() if re.search(r"\bmake -C .*kernels", line)]
    assert len(lines) == 1, lines
    m = re.search(r"make -C \"\$NEW/src/kernels\" (.*?) >", lines[0])
    assert m, lines[0]
    return m.group(1).split()  # e.g. -j"$JOBS" CC="$CC"


def test_install_kernel_build_has_no_x86_only_flags_and_makes_an_aarch64_hbk(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    import io

    with tarfile.open(fileobj=io.BytesIO(_tarball()), mode="r:gz") as tar:
        tar.extractall(src)
    args = _install_make_line()
    assert not [a for a in args if X86_ONLY.search(a)], args
    # the host's cc is the cross compiler; this arm64 host has no nvcc (an x86 nvcc cannot link into it)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "cc").symlink_to(shutil.which(CROSS_CC))
    path = os.pathsep.join([str(bindir), *[d for d in os.environ["PATH"].split(os.pathsep)
                                            if not (Path(d) / "nvcc").exists()]])
    env = {"PATH": path, "HOME": str(tmp_path), "LANG": "C.UTF-8", "JOBS": str(os.cpu_count() or 2), "CC": "cc",
           "HOSTBENCH_FMA_PROBE": "0"}
    argv = ["make", "-C", str(src / "kernels"),
            *[os.path.expandvars(a.replace('"', "").replace("$JOBS", env["JOBS"]).replace("$CC", env["CC"]))
              for a in args]]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    log = out.stdout + out.stderr
    assert out.returncode == 0, log[-3000:]
    compile_lines = [line for line in log.splitlines() if line.startswith("cc ")]
    assert compile_lines, log[-2000:]
    assert not [line for line in compile_lines if X86_ONLY.search(line)], compile_lines
    hbk = src / "kernels" / "build" / "hbk"
    head = hbk.read_bytes()[:20]
    assert head[:4] == b"\x7fELF" and int.from_bytes(head[18:20], "little") == EM_AARCH64, head

    # the installer's gate: the runner's --check on this hbk, run under qemu-user
    qemu = shutil.which("qemu-aarch64-static") or shutil.which("qemu-aarch64")
    wrapper = tmp_path / "hbk-under-qemu"
    wrapper.write_text(f'#!/bin/sh\nQEMU_LD_PREFIX={SYSROOT} exec {qemu} {hbk} "$@"\n')
    wrapper.chmod(0o755)
    runner_src = src  # hostbench_runner/ as the tarball holds it, as the installer runs it (lib/)
    check = subprocess.run([sys.executable, "-s", "-m", "hostbench_runner", "--check", "--kernel-bin", str(wrapper)],
                           env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": str(runner_src)},
                           capture_output=True, text=True, timeout=300, cwd=tmp_path)
    text = check.stdout + check.stderr
    print(text)
    assert check.returncode == 0 and "ok: the kernel is runnable" in text, text
    assert re.search(r"kernel cpu: ok \(\d+ parameters\)", text) and "kernel memory: ok" in text, text
    # the ARM build describes the ARM ISAs
    describe = subprocess.run([str(wrapper), "cpu", "--describe"], capture_output=True, text=True, timeout=120)
    assert '"sve"' in describe.stdout and '"neon"' in describe.stdout and "avx512" not in describe.stdout
