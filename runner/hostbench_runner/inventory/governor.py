"""CPU frequency policy: scaling governor and driver of every CPU, boost switch."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .files import list_dir, read_value

SYS_CPU = "sys/devices/system/cpu"


def read(root: Path) -> dict[str, Any]:
    governors = {}
    driver = None
    for name in list_dir(root, SYS_CPU):
        if re.fullmatch(r"cpu\d+", name):
            governors[name] = read_value(root, f"{SYS_CPU}/{name}/cpufreq/scaling_governor")
            driver = driver or read_value(root, f"{SYS_CPU}/{name}/cpufreq/scaling_driver")
    return {
        "governors": governors,
        "driver": driver,
        "boost": read_value(root, f"{SYS_CPU}/cpufreq/boost"),
        "intel_no_turbo": read_value(root, f"{SYS_CPU}/intel_pstate/no_turbo"),
    }


def parse(raw: dict[str, Any]) -> dict[str, Any]:
    values = sorted({g for g in (raw.get("governors") or {}).values() if g})
    governor = None
    if len(values) == 1:
        governor = values[0]
    elif values:
        governor = "mixed: " + ",".join(values)
    boost = None
    if raw.get("boost") in ("0", "1"):
        boost = raw["boost"] == "1"
    elif raw.get("intel_no_turbo") in ("0", "1"):
        boost = raw["intel_no_turbo"] == "0"
    return {"governor": governor, "driver": raw.get("driver"), "boost": boost}
