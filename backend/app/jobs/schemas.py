from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from app.core.bounds import BodyId
from app.experiments.registry import (
    CpuParams,
    CpuTraceParams,
    DiskParams,
    GpuParams,
    MemoryParams,
    NetworkPairParams,
    NetworkParams,
)
from app.results.schemas import RunResult


def _iso_datetime(value: Any) -> Any:
    """A date-time in a query is ISO 8601 (2026-11-24T18:00:00Z), never a bare number that pydantic would read as a
    Unix time: the OpenAPI document says date-time, and a number is refused as it says."""
    if isinstance(value, str) and not (len(value) >= 10 and value[4] == "-" and value[7] == "-"):
        raise ValueError("expected an ISO 8601 date-time, e.g. 2026-11-24T18:00:00Z")
    return value


IsoDatetime = Annotated[datetime, BeforeValidator(_iso_datetime)]
HostIds = Annotated[list[BodyId], Field(min_length=1, max_length=16)]


class _JobCreateBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    host_ids: HostIds

    @field_validator("host_ids")
    @classmethod
    def _distinct(cls, v: list[int]) -> list[int]:
        if len(set(v)) != len(v):
            raise ValueError("host ids must be distinct")
        return v


class CpuJobCreate(_JobCreateBase):
    experiment: Literal["cpu"]
    params: CpuParams = Field(default_factory=CpuParams)  # type: ignore[arg-type]


class CpuTraceJobCreate(_JobCreateBase):
    experiment: Literal["cpu_trace"]
    params: CpuTraceParams = Field(default_factory=CpuTraceParams)  # type: ignore[arg-type]


class MemoryJobCreate(_JobCreateBase):
    experiment: Literal["memory"]
    params: MemoryParams = Field(default_factory=MemoryParams)  # type: ignore[arg-type]


class DiskJobCreate(_JobCreateBase):
    experiment: Literal["disk"]
    params: DiskParams = Field(default_factory=DiskParams)  # type: ignore[arg-type]


class NetworkJobCreate(_JobCreateBase):
    experiment: Literal["network"]
    params: NetworkParams = Field(default_factory=NetworkParams)  # type: ignore[arg-type]


class NetworkPairJobCreate(_JobCreateBase):
    """host_ids = [server host, client host]: the first serves on a port it chooses, the second drives."""

    host_ids: Annotated[list[BodyId], Field(min_length=2, max_length=2)]
    experiment: Literal["network_pair"]
    params: NetworkPairParams = Field(default_factory=NetworkPairParams)  # type: ignore[arg-type]


class GpuJobCreate(_JobCreateBase):
    experiment: Literal["gpu"]
    params: GpuParams = Field(default_factory=GpuParams)  # type: ignore[arg-type]


AnyJobCreate = (CpuJobCreate | CpuTraceJobCreate | MemoryJobCreate | DiskJobCreate | NetworkJobCreate
                | NetworkPairJobCreate | GpuJobCreate)
JobCreate = Annotated[AnyJobCreate, Field(discriminator="experiment")]


class RunPublic(BaseModel):
    id: int
    job_id: int
    host_id: int
    host_name: str
    experiment: str
    params: dict[str, Any]
    status: Literal["queued", "dispatched", "running", "succeeded", "failed", "untrusted", "cancelled"]
    status_reason: str | None
    attempt: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    expected_duration_s: float
    progress: float
    last_seq: int
    unit: str
    kernel_info: dict[str, Any] | None
    result: RunResult | None
    # The host's instance labels when the run was handed out (null until then).
    labels_snapshot: dict[str, Any] | None = None
    created_by: str | None = None
    cancelled_by: str | None = None


class RunFilter(BaseModel):
    ids: list[int] | None = None
    job_id: int | None = None
    host_id: int | None = None
    experiment: str | None = None
    status: str | None = None
    provider: str | None = None
    instance_type: str | None = None
    region: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None


class RunsPublic(BaseModel):
    data: list[RunPublic]
    count: int


class JobPublic(BaseModel):
    id: int
    created_at: datetime
    experiment: str
    created_by: str | None = None
    runs: list[RunPublic]


class SamplePublic(BaseModel):
    seq: int
    t: float
    interval_s: float
    threads: int
    repeat: int
    warmup: bool
    value: float
    unit: str
    op: str | None = None
    block_bytes: int | None = None


class SamplesPublic(BaseModel):
    data: list[SamplePublic]
    count: int


class ExperimentPublic(BaseModel):
    kind: str
    title: str
    description: str
    unit_hint: str
    parameters: dict[str, Any]


class ExperimentsPublic(BaseModel):
    data: list[ExperimentPublic]
