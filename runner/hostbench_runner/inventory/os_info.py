"""OS: kernel release from /proc/sys/kernel, distribution from os-release."""

from __future__ import annotations

import platform
import shlex
from pathlib import Path
from typing import Any

from .files import read_text, read_value


def read(root: Path) -> dict[str, Any]:
    return {
        "ostype": read_value(root, "proc/sys/kernel/ostype"),
        "osrelease": read_value(root, "proc/sys/kernel/osrelease"),
        "os_release": read_text(root, "etc/os-release") or read_text(root, "usr/lib/os-release"),
        # The machine type is no file; only the live host can say it.
        "machine": (platform.machine() or None) if root == Path("/") else None,
    }


def parse_os_release(text: str) -> dict[str, str]:
    """KEY=value lines with shell quoting (os-release(5))."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        try:
            parts = shlex.split(value)
        except ValueError:
            continue
        out[key.strip()] = parts[0] if parts else ""
    return out


def parse(raw: dict[str, Any]) -> dict[str, Any]:
    rel = parse_os_release(raw.get("os_release") or "")
    return {
        "system": raw.get("ostype"),
        "kernel": raw.get("osrelease"),
        "arch": raw.get("machine"),
        "distribution": rel.get("PRETTY_NAME") or rel.get("NAME") or None,
        "distribution_id": rel.get("ID") or None,
        "distribution_version": rel.get("VERSION_ID") or None,
    }
