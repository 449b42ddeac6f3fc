"""NICs: /sys/class/net/* (link speed, MTU, driver, state). The loopback is kept and marked.

`speed` is what the driver reports in Mb/s: -1 (virtio and many virtual NICs) or a read refused
because the link is down is unknown, never a guess. `virtual` means no hardware behind it (no
`device` link: lo, bridges, veth, ifb, tun).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .files import exists, list_dir, read_link, read_value

SYS_NET = "sys/class/net"
ARPHRD_LOOPBACK = 772


def read(root: Path) -> dict[str, Any]:
    nics: dict[str, dict[str, Any]] = {}
    for name in list_dir(root, SYS_NET):
        base = f"{SYS_NET}/{name}"
        nic: dict[str, Any] = {
            key: read_value(root, f"{base}/{key}") for key in ("speed", "mtu", "operstate", "type", "duplex")
        }
        nic["has_device"] = exists(root, f"{base}/device")
        nic["driver"] = read_link(root, f"{base}/device/driver")
        nics[name] = nic
    return {"nics": nics}


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def parse(raw: dict[str, Any]) -> dict[str, Any]:
    out = []
    for name, n in sorted((raw.get("nics") or {}).items()):
        speed = _int(n.get("speed"))
        driver = n.get("driver")
        out.append({
            "name": name,
            "speed_mbps": speed if speed is not None and speed > 0 else None,
            "mtu": _int(n.get("mtu")),
            "driver": driver.rstrip("/").rsplit("/", 1)[-1] if driver else None,
            "operstate": n.get("operstate"),
            "duplex": n.get("duplex") if n.get("duplex") in ("full", "half") else None,
            "loopback": _int(n.get("type")) == ARPHRD_LOOPBACK,
            "virtual": not n.get("has_device"),
        })
    return {"interfaces": out}
