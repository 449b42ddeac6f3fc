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
