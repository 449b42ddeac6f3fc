"""The only file access of the collectors: read text, bytes or a link under a root, None when absent."""

from __future__ import annotations

import os
from pathlib import Path


def read_bytes(root: Path, rel: str, limit: int = 1 << 20) -> bytes | None:
    path = root / rel.lstrip("/")
    try:
        with open(path, "rb") as fh:
            return fh.read(limit)
    except OSError:
        # Absent, not permitted (SMBIOS entries need root), or a sysfs file that refuses reads
        # (EINVAL, EIO: a link that is down has no speed): unknown, not an error.
        return None


def read_text(root: Path, rel: str, limit: int = 1 << 20) -> str | None:
    data = read_bytes(root, rel, limit)
    return None if data is None else data.decode("utf-8", errors="replace")


def read_value(root: Path, rel: str) -> str | None:
    text = read_text(root, rel, 4096)
    return None if text is None else text.strip() or None


def read_link(root: Path, rel: str) -> str | None:
    """The target of a symlink as written (sysfs `device/driver` links), None if it is no link."""
    try:
        return os.readlink(root / rel.lstrip("/"))
    except OSError:
        return None


def exists(root: Path, rel: str) -> bool:
    return os.path.lexists(root / rel.lstrip("/"))


def list_dir(root: Path, rel: str) -> list[str]:
    try:
        return sorted(p.name for p in (root / rel.lstrip("/")).iterdir())
    except OSError:
        return []
