"""The one settings object of the runner process: command line first, then HOSTBENCH_* env."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hostbench_common.errors import ParamError
from hostbench_common.experiments import DISK_TARGET, DISK_TARGET_WORK, format_arg

from . import __version__
from .errors import ConfigError

# Where the kernel binary `hbk` is looked for, in this order (first_kernel_bin):
#   1. --kernel-bin / HOSTBENCH_KERNEL_BIN: taken as given, nothing else is searched;
#   2. inside the installed package, where `pip install ./runner` puts the hbk it built (setup.py);
#   3. the source tree: <repo>/runner/kernels/build/hbk, found from <repo>/runner/hostbench_runner/config.py;
#   4. `hbk` on PATH.
PACKAGED_KERNEL_BIN = Path(__file__).resolve().parent / "_bin" / "hbk"
SOURCE_KERNEL_BIN = Path(__file__).resolve().parent.parent / "kernels" / "build" / "hbk"


@dataclass(frozen=True)
class KernelSearch:
    """The kernel binary found (None: none), and each place looked, in order, in words."""

    path: Path | None
    looked: tuple[str, ...]

    def missing(self) -> str:
        return "kernel binary hbk not found; looked at: " + "; ".join(self.looked)


def _runnable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def locate_kernel(explicit: str | None = None, path_env: str | None = None) -> KernelSearch:
    if explicit:
        where = Path(explicit)
        given = f"{where} (--kernel-bin / HOSTBENCH_KERNEL_BIN; nothing else is searched when it is set)"
        return KernelSearch(where if _runnable(where) else None, (given,))
    looked = []
    for where, what in ((PACKAGED_KERNEL_BIN, "packaged with the runner"),
                        (SOURCE_KERNEL_BIN, "the source tree's kernels/build")):
        looked.append(f"{where} ({what})")
        if _runnable(where):
            return KernelSearch(where, tuple(looked))
    path_env = os.environ.get("PATH", os.defpath) if path_env is None else path_env
    looked.append(f"hbk on PATH ({path_env})")
    found = shutil.which("hbk", path=path_env)
    return KernelSearch(Path(found) if found else None, tuple(looked))


def _default_kernel_bin() -> Path:
    return locate_kernel().path or PACKAGED_KERNEL_BIN

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
    kernel_bin: Path = field(default_factory=_default_kernel_bin)
    # Where the kernel was looked for (config.locate_kernel), for the error when it is missing.
    kernel_looked: tuple[str, ...] = ()
    register_only: bool = False
    # One-shot (--once, for Slurm jobs and Kubernetes Jobs): join, run what the server hands this host, upload, exit
    # once no work came for once_idle_s after a run, or none at all within once_wait_s. Without --state-dir the
    # state (credential, spool) is a fresh directory removed at exit: the next job joins again as the same host.
    once: bool = False
    once_wait_s: float = 600.0
    once_idle_s: float = 10.0
    # --once and no state directory given: the state goes in a temporary directory, removed at exit (__main__)
    once_temp_state: bool = False
    name: str = field(default_factory=socket.gethostname)
    labels: dict[str, str] = field(default_factory=dict)
    log_level: str = "INFO"
    # Probe the CPU's FMA issue rate once per host and kernel build (inventory/fma_probe.py; a few seconds of
    # one core before any run is taken, cached in the state directory). HOSTBENCH_FMA_PROBE=0 turns it off.
    fma_probe: bool = True
    # Directories a disk job may put its test file in, by name (--disk-target NAME=PATH); each checked at start
    # (parse_disk_targets), advertised by name in the inventory, never a path from a request.
    disk_targets: dict[str, Path] = field(default_factory=dict)

    # Timing. Defaults follow docs/api.md and docs/reliability.md (rule 4); tests shorten them.
    heartbeat_s: float = 5.0
    poll_wait_s: int = 20
    lease_renew_s: float = 5.0
    lease_lost_after_s: float = 30.0
    # how long a run keeps measuring while the server answers that its database is unavailable (0: not at all)
    db_outage_grace_s: float = 300.0
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
    def probe_cache(self) -> Path:
        return self.state_dir / "fma-probe.json"

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


def parse_disk_targets(items: Sequence[str]) -> dict[str, Path]:
    """NAME=PATH items as the runner's disk targets: a name of the table's pattern (not "work", the run's own
    directory), an absolute path to an existing directory this process may write in (owned by its user, or
    writable) and can hand the kernel as an argument; a name at most once."""
    targets: dict[str, Path] = {}
    for item in items:
        item = item.strip()
        if not item:
            continue
        name, sep, raw = item.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep or not re.fullmatch(DISK_TARGET["pattern"], name) or name == DISK_TARGET_WORK:
            raise ConfigError(f"bad disk target {item!r}: expected NAME=PATH, NAME like 'nvme0' "
                              f"({DISK_TARGET['pattern']}, not {DISK_TARGET_WORK!r}: the run's own directory)")
        if name in targets:
            raise ConfigError(f"disk target {name!r} is given twice")
        path = Path(raw)
        if not path.is_absolute():
            raise ConfigError(f"disk target {name}: {raw!r} is not an absolute path")
        if not path.is_dir():
            raise ConfigError(f"disk target {name}: {raw} is not an existing directory")
        path = Path(os.path.realpath(path))  # where its runs' directories are made, links resolved once
        if path.stat().st_uid != os.geteuid() and not os.access(path, os.W_OK | os.X_OK):
            raise ConfigError(f"disk target {name}: {path} is neither owned by nor writable for this user")
        try:
            format_arg("workdir", str(path))
        except ParamError as exc:
            raise ConfigError(f"disk target {name}: {exc} (the kernel takes it as an argument)") from None
        targets[name] = path
    return targets


def _truthy(raw: str) -> bool:
    return raw.strip().lower() in ("1", "true", "yes", "on")


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
    p.add_argument(
        "--disk-target",
        action="append",
        default=None,
        metavar="NAME=PATH",
        help="repeatable: a directory disk jobs may put their test file in, named by the job (target NAME); "
        "absolute, existing, owned by or writable for this user [HOSTBENCH_DISK_TARGETS, comma list]",
    )
    p.add_argument(
        "--register-only",
        action="store_true",
        help="register with the registration token, store the credential and exit 0; with a stored credential, "
        "check that the server accepts it and exit",
    )
    p.add_argument(
        "--once",
        action="store_true",
        help="one-shot: join, run the work the server gives this host, upload, exit (no daemon left behind); "
        "without --state-dir the state is a temporary directory [HOSTBENCH_ONCE=1]",
    )
    p.add_argument("--once-wait", type=float, default=None, metavar="S",
                   help="one-shot: exit 4 when no work came within S seconds of joining (default 600) "
                   "[HOSTBENCH_ONCE_WAIT]")
    p.add_argument("--once-idle", type=float, default=None, metavar="S",
                   help="one-shot: after a run, exit 0 when no more work came for S seconds (default 10) "
                   "[HOSTBENCH_ONCE_IDLE]")
    p.add_argument(
        "--check",
        action="store_true",
        help="find the kernel binary, run its --version and every kernel's --describe, print what was found and "
        "exit (0: all runnable); needs no server",
    )
    p.add_argument("--version", action="version", version=f"hostbench-runner {__version__}")
    return p


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    return _parser().parse_args(argv)


def load(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    args = _parser().parse_args(argv)
    return from_args(args, env)


def kernel_bin_given(args: argparse.Namespace, env: Mapping[str, str]) -> str | None:
    """The kernel binary named by --kernel-bin or HOSTBENCH_KERNEL_BIN, or None (then it is searched for)."""
    return args.kernel_bin or env.get("HOSTBENCH_KERNEL_BIN") or None


def machine_id_given(env: Mapping[str, str] | None = None) -> str:
    """HOSTBENCH_MACHINE_ID: this machine's id for a host without /etc/machine-id (credential.machine_id)."""
    return (os.environ if env is None else env).get("HOSTBENCH_MACHINE_ID", "").strip()


def from_args(args: argparse.Namespace, env: Mapping[str, str]) -> Settings:
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
    kbin = kernel_bin_given(args, env)
    search = locate_kernel(kbin, env.get("PATH", os.defpath))
    settings.kernel_bin = search.path or (Path(kbin) if kbin else PACKAGED_KERNEL_BIN)
    settings.kernel_looked = search.looked
    settings.register_only = bool(getattr(args, "register_only", False))
    settings.once = bool(getattr(args, "once", False)) or _truthy(env.get("HOSTBENCH_ONCE", "0"))
    settings.once_temp_state = settings.once and not state
    for attr, flag, var in (("once_wait_s", "once_wait", "HOSTBENCH_ONCE_WAIT"),
                            ("once_idle_s", "once_idle", "HOSTBENCH_ONCE_IDLE")):
        raw = getattr(args, flag, None)
        raw = raw if raw is not None else env.get(var)
        if raw is not None:
            try:
                value = float(raw)
            except ValueError:
                raise ConfigError(f"{var.lower()}: {raw!r} is not a number of seconds") from None
            if not 0 < value <= 86400:
                raise ConfigError(f"{var.lower()}: {value} is not in (0, 86400] seconds")
            setattr(settings, attr, value)
    if settings.once:  # the long poll bounds how soon an idle one-shot runner notices it may leave
        settings.poll_wait_s = max(1, min(settings.poll_wait_s, int(settings.once_idle_s / 2)))
    name = args.name or env.get("HOSTBENCH_RUNNER_NAME")
    if name:
        settings.name = name
    # On a Slurm node (a job step's environment) the host keeps its Slurm node name: as its name unless one was
    # given, and always as the label slurm_node, which the server's drain uses (docs/fleet.md)
    slurm_node = env.get("SLURMD_NODENAME", "").strip()
    if slurm_node:
        if not name:
            settings.name = slurm_node
        labels.setdefault("slurm_node", slurm_node)
    # In a Kubernetes pod the node's name comes in by the downward API (spec.nodeName -> HOSTBENCH_NODE_NAME)
    k8s_node = env.get("HOSTBENCH_NODE_NAME", "").strip()
    if k8s_node:
        if not name:
            settings.name = k8s_node
        labels.setdefault("k8s_node", k8s_node)
    if not settings.name or len(settings.name) > 128:
        raise ConfigError("runner name must be 1..128 characters")
    settings.log_level = args.log_level or env.get("HOSTBENCH_LOG_LEVEL") or "INFO"
    targets = args.disk_target if args.disk_target is not None else env.get("HOSTBENCH_DISK_TARGETS", "").split(",")
    settings.disk_targets = parse_disk_targets(targets)
    settings.fma_probe = env.get("HOSTBENCH_FMA_PROBE", "1").strip().lower() not in ("0", "false", "no", "off")
    return settings
