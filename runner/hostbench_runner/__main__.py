"""python -m hostbench_runner --server URL [--registration-token T] [--state-dir DIR] ...

Also `--version`, `--check` (is the kernel there and runnable; needs no server) and `--register-only` (register,
store the credential, exit: what the installer runs once)."""

from __future__ import annotations

import json
import logging
import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from hostbench_common.experiments import kernels_needed

from . import __version__, config
from . import log as logsetup
from .daemon import EXIT_CONFIG, EXIT_ERROR, EXIT_OK, Daemon
from .errors import ConfigError, KernelUnavailable
from .kernel import KernelCatalog


def check(kernel_bin: str | None, env: Mapping[str, str]) -> int:
    """Print where the kernel was found and whether each kernel describes itself; 0 when all do."""
    print(f"hostbench-runner {__version__} (Python {platform.python_version()}, {sys.executable})")
    search = config.locate_kernel(kernel_bin, env.get("PATH", os.defpath))
    for where in search.looked:
        print(f"looked at: {where}")
    if search.path is None:
        print(f"error: {search.missing()}")
        return EXIT_ERROR
    print(f"kernel: {search.path}")
    catalog = KernelCatalog(search.path, looked=search.looked)
    print(f"kernel build: {json.dumps(catalog.build_info(), sort_keys=True)}")
    failed = 0
    for name in kernels_needed():
        try:
            doc = catalog.describe(name)
            print(f"kernel {name}: ok ({len(doc['parameters']['properties'])} parameters)")
        except KernelUnavailable as exc:
            failed += 1
            print(f"kernel {name}: FAILED: {exc}")
    print("ok: the kernel is runnable" if not failed else f"error: {failed} kernel(s) failed --describe")
    return EXIT_OK if not failed else EXIT_ERROR


def main(argv: Sequence[str] | None = None) -> int:
    logsetup.setup()
    args = config.parse_args(argv)
    if args.check:
        return check(config.kernel_bin_given(args, os.environ), os.environ)
    try:
        settings = config.from_args(args, os.environ)
    except ConfigError as exc:
        logging.getLogger("hostbench").error("configuration: %s", exc)
        return EXIT_CONFIG
    logsetup.setup(settings.log_level)
    temp_state = None
    if settings.once_temp_state:
        # one-shot without a state directory: a fresh one, removed when it leaves (nothing stays on the node)
        temp_state = tempfile.mkdtemp(prefix="hostbench-runner-once-")
        settings.state_dir = Path(temp_state)
        settings.fma_probe = False  # seconds of a core on every job, and nowhere to keep it
    try:
        daemon = Daemon(settings)
        daemon.install_signal_handlers()
        return daemon.main()
    finally:
        if temp_state is not None:
            shutil.rmtree(temp_state, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
