"""GPUs the CUDA kernel (`hbk gpu`) can use: NVIDIA display and 3D controllers on the PCI bus, with the model the
NVIDIA driver names when it is loaded. The section is a list, empty on a host with none; null (unknown) when the
PCI bus cannot be read at all, so that nothing is refused on a guess (common/hostbench_common/hostfit.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .files import exists, list_dir, read_text, read_value

SYS_PCI = "sys/bus/pci/devices"
NVIDIA_DRIVER = "proc/driver/nvidia/gpus"
NVIDIA_VENDOR = "0x10de"
DISPLAY_CLASS = "0x03"  # PCI base class 03: display controller (VGA 0x0300, 3D 0x0302)


def read(root: Path) -> dict[str, Any] | None:
    if not exists(root, SYS_PCI):
        return None
    devices = []
    for addr in list_dir(root, SYS_PCI):
        devices.append({
            "pci": addr,
            "vendor": read_value(root, f"{SYS_PCI}/{addr}/vendor"),
            "device": read_value(root, f"{SYS_PCI}/{addr}/device"),
            "class": read_value(root, f"{SYS_PCI}/{addr}/class"),
            "information": read_text(root, f"{NVIDIA_DRIVER}/{addr}/information", 8192),
        })
    return {"devices": devices}


def _model(information: str | None) -> str | None:
    m = re.search(r"^Model:\s*(.+?)\s*$", information or "", re.MULTILINE)
    return m.group(1) if m else None


def parse(raw: dict[str, Any] | None) -> list[dict[str, Any]] | None:
    if raw is None:
        return None
    return [{"pci": d["pci"], "vendor": "nvidia", "device_id": d.get("device"), "model": _model(d.get("information"))}
            for d in raw.get("devices", [])
            if (d.get("vendor") or "").lower() == NVIDIA_VENDOR
            and (d.get("class") or "").lower().startswith(DISPLAY_CLASS)]
