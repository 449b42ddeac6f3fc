"""The only file access of the collectors: read text under a root, None when absent."""

from __future__ import annotations

from pathlib import Path


def read_text(root: Path, rel: str, limit: int = 1 << 20) -> str | None:
    path = root / rel.lstrip("/")
    try:
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError, PermissionError, IsADirectoryError):
        return None
    except OSError:
        # Some sysfs/procfs files refuse reads (EINVAL, EIO): unknown, not an error.
        return None


def read_value(root: Path, rel: str) -> str | None:
    text = read_text(root, rel, 4096)
    return None if text is None else text.strip() or None


def list_dir(root: Path, rel: str) -> list[str]:
    try:
        return sorted(p.name for p in (root / rel.lstrip("/")).iterdir())
    except OSError:
        return []
