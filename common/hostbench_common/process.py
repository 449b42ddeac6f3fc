"""How the runner's child processes are started and described, shared by its kernels (hostbench_runner/kernel.py)
and the reference tools (reftools/engine.py, reftools/serve.py): each in its own process group, with
PR_SET_PDEATHSIG so it dies with the runner, in the runner's environment minus its own settings; and an exit
status in words for error reasons."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
from typing import Any

PR_SET_PDEATHSIG = 1


def _load_prctl() -> Any:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


# Resolved in the parent: the child runs between fork and exec and must do as little as possible.
_PRCTL = _load_prctl()


def child_setup(parent_pid: int) -> Any:
    """A preexec_fn: the child gets its own process group and dies with `parent_pid` (PR_SET_PDEATHSIG)."""

    def setup() -> None:
        os.setpgid(0, 0)  # its own process group (Popen's process_group=0, which needs Python 3.11)
        # The signal fires when the *thread* that forked exits: kernels are started from the
        # main thread only, which lives as long as the runner.
        if _PRCTL is not None:
            _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent_pid:  # the runner died before prctl took effect
            os._exit(1)

    return setup


def kernel_env() -> dict[str, str]:
    """The runner's environment minus its own settings (the registration token is a secret);
    LC_ALL=C so numbers in JSON never get a locale's decimal comma."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOSTBENCH_")}
    env["LC_ALL"] = "C"
    return env


def describe_exit(rc: int | None) -> str:
    if rc is None:
        return "exit code unknown"
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return f"killed by {name}"
    return f"exit code {rc}"
