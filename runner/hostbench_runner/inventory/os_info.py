"""OS: kernel release from /proc/sys/kernel, distribution from os-release."""

from __future__ import annotations

import hashlib
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
        # Who else runs on this machine: runners in containers on one machine share the running kernel's boot
        # id, runners of one installation its machine id. Only digests leave the host (machine-id(5) asks that
        # the id itself is not exposed); the server compares them between the two hosts of a network pair.
        "machine_id": _digest(read_value(root, "etc/machine-id")),
        "boot_id": _digest(read_value(root, "proc/sys/kernel/random/boot_id")),
    }


def _digest(value: str | None) -> str | None:
    return hashlib.sha256(f"hostbench:{value}".encode()).hexdigest()[:32] if value else None


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
        "machine_id": raw.get("machine_id"),
        "boot_id": raw.get("boot_id"),
    }
