from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Peak(BaseModel):
    value: float
    unit: str
    formula: str
    source: Literal["computed", "reported", "user"]


class HostPublic(BaseModel):
    id: int
    name: str
    hostname: str
    online: bool
    last_seen_at: datetime | None
    registered_at: datetime
    runner_version: str
    labels: dict[str, Any]
    inventory: dict[str, Any]
    peaks: dict[str, Peak | None]
    peak_notes: dict[str, str]


class HostsPublic(BaseModel):
    data: list[HostPublic]
    count: int


class HostLabelsUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: str | None = Field(None, max_length=64)
    instance_type: str | None = Field(None, max_length=64)
    region: str | None = Field(None, max_length=64)


PeakKey = Literal["cpu_fp64", "cpu_fp32", "cpu_int32", "memory_bw", "disk_bw", "nic_bw", "gpu_fp32", "gpu_fp64",
                  "gpu_bw"]
PEAK_UNITS = {"cpu_fp64": "GFLOP/s", "cpu_fp32": "GFLOP/s", "cpu_int32": "GIOP/s", "memory_bw": "MB/s",
              "disk_bw": "MB/s", "nic_bw": "Mbit/s", "gpu_fp32": "GFLOP/s", "gpu_fp64": "GFLOP/s", "gpu_bw": "GB/s"}


class PeakOverride(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: float = Field(gt=0, le=1e12, description="the peak for the whole host, in the key's unit")
    note: str | None = Field(None, max_length=500, description="where the figure comes from (a datasheet, ...)")
