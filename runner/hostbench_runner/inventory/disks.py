"""Disks: block devices from /sys/block, and the filesystem and device that hold the runner's work
directory (the disk kernel's files live there) from /proc/self/mountinfo.

A device without media (an unused loop or zram device: size 0) is left out. `virtual` means no
hardware behind it (no `device` link: loop, zram, device-mapper, md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .files import exists, list_dir, read_link, read_text, read_value

SYS_BLOCK = "sys/block"
SECTOR = 512  # /sys/block/*/size counts 512-byte sectors whatever the device's block size


def _free_bytes(path: str) -> int | None:
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def read(root: Path, work_dir: Path | str | None = None,
         targets: Mapping[str, Path | str] | None = None) -> dict[str, Any]:
    devices: dict[str, dict[str, Any]] = {}
    for name in list_dir(root, SYS_BLOCK):
        base = f"{SYS_BLOCK}/{name}"
        partitions = {
            sub: read_value(root, f"{base}/{sub}/dev")
            for sub in list_dir(root, base)
            if exists(root, f"{base}/{sub}/partition")
        }
        devices[name] = {
            "dev": read_value(root, f"{base}/dev"),
            "size": read_value(root, f"{base}/size"),
            "removable": read_value(root, f"{base}/removable"),
            "ro": read_value(root, f"{base}/ro"),
            "rotational": read_value(root, f"{base}/queue/rotational"),
            "scheduler": read_value(root, f"{base}/queue/scheduler"),
            "logical_block_size": read_value(root, f"{base}/queue/logical_block_size"),
            "physical_block_size": read_value(root, f"{base}/queue/physical_block_size"),
            "model": read_value(root, f"{base}/device/model"),
            "vendor": read_value(root, f"{base}/device/vendor"),
            "has_device": exists(root, f"{base}/device"),
            # NVMe: the namespace's device is the controller; the driver sits on its PCI device
            "driver": read_link(root, f"{base}/device/driver") or read_link(root, f"{base}/device/device/driver"),
            "partitions": partitions,
        }
    if work_dir is not None and Path(root) == Path("/"):
        work_dir = os.path.realpath(work_dir)  # a symlinked state dir lives where its target is
    live = Path(root) == Path("/")  # free space is a live fact: none for a fixture tree
    return {
        "devices": devices,
        "mountinfo": read_text(root, "proc/self/mountinfo"),
        "work_dir": None if work_dir is None else str(work_dir),
        "targets": {name: {"path": str(path), "free_bytes": _free_bytes(str(path)) if live else None}
                    for name, path in (targets or {}).items()},
    }


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _flag(text: str | None) -> bool | None:
    return {"0": False, "1": True}.get(text or "")


def scheduler(text: str | None) -> str | None:
    """'none [mq-deadline] kyber bfq' -> 'mq-deadline'; a lone 'none' is itself."""
    if not text:
        return None
    m = re.search(r"\[([^\]]+)\]", text)
    if m:
        return m[1]
    words = text.split()
    return words[0] if len(words) == 1 else None


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes (\\040 ...)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), field)


def parse_mountinfo(text: str) -> list[dict[str, str]]:
    """proc(5): id parent major:minor root mount_point options [optional...] - fstype source super_options."""
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        a, b = left.split(), right.split()
        if len(a) < 6 or len(b) < 2:
            continue
        mounts.append({
            "dev": a[2], "mount_point": _unescape(a[4]), "options": a[5],
            "fstype": b[0], "source": _unescape(b[1]),
        })
    return mounts


def mount_of(path: str, mounts: list[dict[str, str]]) -> dict[str, str] | None:
    """The mount that holds `path`: the longest mount point above it; the last one of stacked mounts."""
    best: dict[str, str] | None = None
    for m in mounts:
        mp = m["mount_point"]
        inside = path == mp or path.startswith(mp.rstrip("/") + "/") or mp == "/"
        if inside and (best is None or len(mp) >= len(best["mount_point"])):
            best = m
    return best


def parse_device(name: str, d: dict[str, Any]) -> dict[str, Any]:
    size = _int(d.get("size"))
    driver = d.get("driver")
    return {
        "name": name,
        "model": d.get("model"),
        "vendor": d.get("vendor"),
        "size_bytes": size * SECTOR if size is not None else None,
        "rotational": _flag(d.get("rotational")),
        "scheduler": scheduler(d.get("scheduler")),
        "logical_block_bytes": _int(d.get("logical_block_size")),
        "physical_block_bytes": _int(d.get("physical_block_size")),
        "removable": _flag(d.get("removable")),
        "read_only": _flag(d.get("ro")),
        "driver": driver.rstrip("/").rsplit("/", 1)[-1] if driver else None,
        "virtual": not d.get("has_device"),
    }


def place(path: str, mounts: list[dict[str, str]], devices: dict[str, Any]) -> dict[str, Any]:
    """The filesystem and block device a directory lives on."""
    mount = mount_of(path, mounts)
    where: dict[str, Any] = {"path": path, "mount_point": None, "fstype": None, "source": None, "options": None,
                             "device": None, "partition": None}
    if mount is not None:
        where.update({k: mount[k] for k in ("mount_point", "fstype", "source", "options")})
        # major:minor names the block device exactly; the source text may be a label or a mapper name.
        for name, d in devices.items():
            if d.get("dev") == mount["dev"]:
                where["device"] = name
            for part, dev in (d.get("partitions") or {}).items():
                if dev == mount["dev"]:
                    where["device"], where["partition"] = name, part
    return where


def parse(raw: dict[str, Any]) -> dict[str, Any]:
    devices = raw.get("devices") or {}
    out = [parse_device(name, d) for name, d in sorted(devices.items())]
    out = [d for d in out if d["size_bytes"] != 0]
    mounts = parse_mountinfo(raw.get("mountinfo") or "")
    path = raw.get("work_dir")
    work = place(path, mounts, devices) if path else None
    # The runner's disk targets by name, as a job names them; their paths stay on the host.
    targets = []
    for name, t in sorted((raw.get("targets") or {}).items()):
        where = place(t["path"], mounts, devices)
        targets.append({"name": name, "fstype": where["fstype"], "device": where["device"],
                        "free_bytes": t.get("free_bytes")})
    return {"devices": out, "work_dir": work, "targets": targets}
