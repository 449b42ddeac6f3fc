from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.core.bounds import JsonNumber


class Peak(BaseModel):
    value: float
    unit: str
    formula: str
    source: Literal["computed", "reported", "user", "inferred"]
    since: datetime | None = None  # a peak entered by a person: when (it applies to every run of the host)


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
    revoked: bool = False
    revoked_at: datetime | None = None
    # The source address of the runner's latest call (what a two-host job's driver connects to).
    address: str | None = None
    server_version: str = ""
    version_mismatch: bool = False
    credential_rotation_pending: bool = False


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

    value: JsonNumber = Field(gt=0, le=1e12, description="the peak for the whole host, in the key's unit")
    note: str | None = Field(None, max_length=500, description="where the figure comes from (a datasheet, ...)")


class RegistrationTokenCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ttl_s: JsonNumber = Field(900, ge=60, le=86400, description="how long the token may be used (seconds)")


class RegistrationTokenCreated(BaseModel):
    token: str = Field(description="single use; shown once")
    expires_at: datetime
    install_command: str = Field(description="paste on the target host: installs, registers and starts the runner")
    container_command: str = Field(description="the same as a container, for hosts that prefer one")
