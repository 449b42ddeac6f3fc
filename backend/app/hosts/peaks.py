"""Theoretical CPU peaks for the API. The knowledge (the microarchitecture tables, the inference from ISA flags and
the FMA probe, the clock, the inventory's typed view) is hostbench_common.peaks, shared with the CLI's `bench cpu`;
this module gives its result the API's pydantic Peak and re-exports the rest for the backend's code."""
from typing import Any

from hostbench_common import peaks as common
from hostbench_common.peaks import (
    ASSUMED_FMA_UNITS,
    Microarch,
    RunClock,
    clock_ghz,
    contradicted,
    inferred_arch,
    microarch,
    peak_clock_ghz,
    readable_inventory,
    run_clock_ghz,
)

from app.hosts.schemas import Peak

__all__ = ["ASSUMED_FMA_UNITS", "Microarch", "RunClock", "as_api_peak", "clock_ghz", "contradicted", "cpu_peak",
           "inferred_arch", "microarch", "peak_clock_ghz", "readable_inventory", "run_clock_ghz"]


def as_api_peak(peak: common.Peak) -> Peak:
    return Peak(value=peak.value, unit=peak.unit, formula=peak.formula, source=peak.source)


def cpu_peak(
    inventory: dict[str, Any], op: str, threads: int, isa: str | None, measured_ghz: float | RunClock | None
) -> tuple[Peak | None, str | None]:
    """Peak for `threads` threads running `op` with `isa`; (None, why) when a fact is unknown."""
    peak, why = common.cpu_peak(inventory, op, threads, isa, measured_ghz)
    return (as_api_peak(peak) if peak is not None else None), why
