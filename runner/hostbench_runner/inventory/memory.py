"""Memory: MemTotal from /proc/meminfo."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .files import read_text


def read(root: Path) -> dict[str, Any]:
    return {"meminfo": read_text(root, "proc/meminfo")}


def parse(raw: dict[str, Any]) -> dict[str, Any]:
    total = None
    m = re.search(r"^MemTotal:\s*(\d+)\s*kB\s*$", raw.get("meminfo") or "", re.MULTILINE)
    if m:
        total = int(m[1]) * 1024
    return {"total_bytes": total}
