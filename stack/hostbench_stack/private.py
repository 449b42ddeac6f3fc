"""Files and directories that only we may read: the state directory, its secrets, logs (docs/security.md)."""
import contextlib
import os
from pathlib import Path


def private_dir(path: Path) -> Path:
    """Create `path` (0700) so that only we may list or write it; an existing one loses group and other
    read/write but keeps their execute bit: as root, the PostgreSQL system user must traverse the state
    directory to reach its data directory (it can list or read nothing there)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    mode = path.stat().st_mode & 0o777
    if mode & 0o066:
        path.chmod(mode & ~0o066)
    return path


def write_private(path: Path, text: str) -> None:
    """Write a file that only its owner may read (0600 from the first byte: no window with wider modes)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    os.replace(tmp, path)
