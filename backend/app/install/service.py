"""The runner installer, served by the hostbench server so that target hosts need no internet: the install
script (runner/install/install.sh, verbatim) and a gzip tarball of the runner's sources (the
hostbench_runner package, the common package it imports (hostbench_common, from common/ beside runner/), the
kernels' sources and Makefile, pyproject.toml and setup.py, the install
script, and a Dockerfile at its root for `docker build URL`). The tarball is built once per process and
again only when a source file changes (its key is every file's path, size and mtime); its bytes are
deterministic (sorted entries, fixed owner, mode and time), so the same sources give the same ETag on
every server.

Also the one-line commands the dashboard shows after "Add host" (install_command, container_command)."""
from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import shlex
import tarfile
import threading
from dataclasses import dataclass
from pathlib import Path

import app
from app.core.config import get_settings

SCRIPT = "install/install.sh"
DOCKERFILE = "install/Dockerfile"
TARBALL_NAME = "hostbench-runner.tar.gz"
# Top-level files of runner/ that go into the tarball as they are, and the folders that go in whole.
FILES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md")
TREES = ("hostbench_runner", "kernels")
# The common package (the experiment table, the kernels' schemas, the reference tools), from the checkout's
# common/ beside runner/; in the tarball at the root, beside hostbench_runner.
COMMON = "hostbench_common"
# Never shipped: build outputs, caches, a binary a local pip install left in the package.
SKIP_DIRS = {"build", "dist", "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache", "_bin"}
SKIP_SUFFIXES = (".pyc", ".pyo", ".o", ".d", ".egg-info")
# http(s)://host[:port], optionally with a path prefix (a server behind a proxy at https://example.com/hostbench)
_BASE_URL = re.compile(r"^https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?(/[A-Za-z0-9._~-]+)*$")


class RunnerSourcesMissing(Exception):
    """The runner's sources are not where the settings say (runner_source_dir)."""


def runner_source_dir() -> Path:
    configured = getattr(get_settings(), "runner_source_dir", None)
    if configured:
        return Path(configured).resolve()
    return Path(app.__file__).resolve().parents[2] / "runner"


def _check_sources(root: Path) -> None:
    missing = [p for p in (SCRIPT, DOCKERFILE, "hostbench_runner/__init__.py", "kernels/Makefile")
               if not (root / p).is_file()]
    if not (_common_dir(root) / "experiments.py").is_file():
        missing.append(f"../common/{COMMON}/experiments.py")
    if missing:
        raise RunnerSourcesMissing(f"the runner's sources are not in {root} (missing {', '.join(missing)}): "
                                   f"set RUNNER_SOURCE_DIR to the runner/ folder of a hostbench checkout")


def install_script() -> bytes:
    root = runner_source_dir()
    _check_sources(root)
    return (root / SCRIPT).read_bytes()


def _common_dir(root: Path) -> Path:
    return root.parent / "common" / COMMON


def _members(root: Path) -> list[tuple[str, Path]]:
    """(name in the tarball, file on disk), sorted by name."""
    out = [("Dockerfile", root / DOCKERFILE), ("install.sh", root / SCRIPT)]
    out += [(name, root / name) for name in FILES if (root / name).is_file()]
    trees = [(tree, root / tree) for tree in TREES] + [(COMMON, _common_dir(root))]
    for tree, top in trees:
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info")]
            for f in filenames:
                path = Path(dirpath) / f
                if f.endswith(SKIP_SUFFIXES) or not path.is_file() or path.is_symlink():
                    continue
                out.append((f"{tree}/{path.relative_to(top).as_posix()}", path))
    return sorted(out)


def _key(members: list[tuple[str, Path]]) -> tuple:
    key = []
    for name, path in members:
        st = path.stat()
        key.append((name, st.st_size, st.st_mtime_ns, st.st_mode & 0o111))
    return tuple(key)


def _build(members: list[tuple[str, Path]]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        dirs: set[str] = set()
        for name, path in members:
            parts = name.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                d = "/".join(parts[:i])
                if d not in dirs:
                    dirs.add(d)
                    info = tarfile.TarInfo(d)
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    tar.addfile(_normal(info))
            data = path.read_bytes()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755 if (path.stat().st_mode & 0o111 or name.endswith(".sh")) else 0o644
            tar.addfile(_normal(info), io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, compresslevel=9) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def _normal(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
    return info


@dataclass(frozen=True)
class Tarball:
    data: bytes
    etag: str
    files: int


_lock = threading.Lock()
_cache: dict[Path, tuple[tuple, Tarball]] = {}


def runner_tarball() -> Tarball:
    root = runner_source_dir()
    _check_sources(root)
    members = _members(root)
    key = _key(members)
    with _lock:
        hit = _cache.get(root)
        if hit is not None and hit[0] == key:
            return hit[1]
        data = _build(members)
        tarball = Tarball(data=data, etag=hashlib.sha256(data).hexdigest()[:32], files=len(members))
        _cache[root] = (key, tarball)
        return tarball


# --- the commands the dashboard shows ----------------------------------------------------------------------

def _check_base_url(base_url: str) -> str:
    base = base_url.rstrip("/")
    if not _BASE_URL.match(base):
        raise ValueError(f"base URL must be http(s)://host[:port][/path], got {base_url!r}")
    return base


def install_command(base_url: str, token: str) -> str:
    """The one line to paste on a target host (as root for a systemd service): it downloads the script and the
    runner from this server, builds the kernels, registers and starts the runner. Extra options
    (--name, --label k=v, --dir, --no-service, --start) can be appended."""
    base = _check_base_url(base_url)
    script = f"{base}/api/install/runner.sh"
    return (f"(curl -fsSL {shlex.quote(script)} || wget -qO- {shlex.quote(script)}) | sh -s -- "
            f"--server {shlex.quote(base)} --token {shlex.quote(token)}")


def container_command(base_url: str, token: str) -> str:
    """The same as a container: built from the server's tarball (a Dockerfile at its root), the host's network
    and PID namespace, the credential in a named volume."""
    base = _check_base_url(base_url)
    context = f"{base}/api/install/{TARBALL_NAME}"
    return (f"docker build -t hostbench-runner {shlex.quote(context)} && "
            f"docker run -d --name hostbench-runner --restart unless-stopped --network host --pid host "
            f"-v hostbench-runner:/var/lib/hostbench-runner -e HOSTBENCH_SERVER={shlex.quote(base)} "
            f"-e HOSTBENCH_REGISTRATION_TOKEN={shlex.quote(token)} hostbench-runner")
