"""The one settings object of the runner process: command line first, then HOSTBENCH_* env."""

from __future__ import annotations

import argparse
import os
import re
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError

# <repo>/runner/kernels/build/hbk, found from this file: <repo>/runner/hostbench_runner/config.py
DEFAULT_KERNEL_BIN = Path(__file__).resolve().parent.parent / "kernels" / "build" / "hbk"

_LABEL_KEY = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


def _default_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return Path(base) / "hostbench-runner"


@dataclass
class Settings:
    server: str
    registration_token: str | None = field(default=None, repr=False)
    state_dir: Path = field(default_factory=_default_state_dir)
    kernel_bin: Path = DEFAULT_KERNEL_BIN
    name: str = field(default_factory=socket.gethostname)
    labels: dict[str, str] = field(default_factory=dict)
    log_level: str = "INFO"

    # Timing. Defaults follow docs/api.md and RELIABILITY.md; tests shorten them.
    heartbeat_s: float = 5.0
    poll_wait_s: int = 20
    lease_renew_s: float = 5.0
    lease_lost_after_s: float = 30.0
    kill_grace_s: float = 3.0
    upload_interval_s: float = 0.2
    upload_batch_max: int = 1000
    backoff_base_s: float = 0.5
    backoff_cap_s: float = 10.0
    http_timeout_s: float = 10.0
    shutdown_timeout_s: float = 10.0
    backlog_wait_s: float = 30.0
    describe_timeout_s: float = 10.0

    @property
    def spool_dir(self) -> Path:
        return self.state_dir / "spool"

    @property
    def work_dir(self) -> Path:
        return self.state_dir / "work"

    @property
    def credential_path(self) -> Path:
        return self.state_dir / "credential.json"


def parse_labels(items: Sequence[str]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for item in items:
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not _LABEL_KEY.match(key) or not value or len(value) > 128:
            raise ConfigError(
                f"bad label {item!r}: expected key=value, key like 'instance_type', value 1..128 chars"
            )
        labels[key] = value
    return labels


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m hostbench_runner",
        description="hostbench runner daemon (each option also from its HOSTBENCH_* variable)",
    )
    p.add_argument("--server", help="server base URL, e.g. http://localhost:8000 [HOSTBENCH_SERVER]")
    p.add_argument(
        "--registration-token",
        help="one-time token used on the first start only [HOSTBENCH_REGISTRATION_TOKEN]",
    )
    p.add_argument("--state-dir", help="credential, spool and work files [HOSTBENCH_RUNNER_STATE]")
    p.add_argument("--kernel-bin", help="path of the hbk binary [HOSTBENCH_KERNEL_BIN]")
    p.add_argument("--name", help="runner name shown in the dashboard [HOSTBENCH_RUNNER_NAME]")
    p.add_argument(
        "--label",
        action="append",
        default=None,
        help="key=value, repeatable: provider, instance_type, region [HOSTBENCH_RUNNER_LABELS, comma list]",
    )
    p.add_argument("--log-level", default=None, help="DEBUG, INFO, WARNING [HOSTBENCH_LOG_LEVEL]")
    return p


def load(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    args = _parser().parse_args(argv)

    server = args.server or env.get("HOSTBENCH_SERVER")
    if not server:
        raise ConfigError("no server: pass --server URL or set HOSTBENCH_SERVER")
    if not re.match(r"^https?://[^\s/]+", server):
        raise ConfigError(f"server must be an http(s) URL, got {server!r}")

    if args.label is not None:
        labels = parse_labels(args.label)
    else:
        labels = parse_labels(env.get("HOSTBENCH_RUNNER_LABELS", "").split(","))

    settings = Settings(server=server.rstrip("/"), labels=labels)
    settings.registration_token = args.registration_token or env.get("HOSTBENCH_REGISTRATION_TOKEN") or None
    state = args.state_dir or env.get("HOSTBENCH_RUNNER_STATE")
    if state:
        settings.state_dir = Path(state)
    kbin = args.kernel_bin or env.get("HOSTBENCH_KERNEL_BIN")
    if kbin:
        settings.kernel_bin = Path(kbin)
    name = args.name or env.get("HOSTBENCH_RUNNER_NAME")
    if name:
        settings.name = name
    if not settings.name or len(settings.name) > 128:
        raise ConfigError("runner name must be 1..128 characters")
    settings.log_level = args.log_level or env.get("HOSTBENCH_LOG_LEVEL") or "INFO"
    return settings
