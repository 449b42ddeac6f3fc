"""python -m hostbench_runner --server URL [--registration-token T] [--state-dir DIR] ..."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from . import config
from . import log as logsetup
from .daemon import EXIT_CONFIG, Daemon
from .errors import ConfigError


def main(argv: Sequence[str] | None = None) -> int:
    logsetup.setup()
    try:
        settings = config.load(argv)
    except ConfigError as exc:
        logging.getLogger("hostbench").error("configuration: %s", exc)
        return EXIT_CONFIG
    logsetup.setup(settings.log_level)
    daemon = Daemon(settings)
    daemon.install_signal_handlers()
    return daemon.main()


if __name__ == "__main__":
    sys.exit(main())
