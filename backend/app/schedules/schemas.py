from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints, field_validator, model_validator

from app.core.bounds import JSON_NUMBER, BodyId
from app.core.db import utcnow
from app.schedules import cron as crontab
from app.suites.schemas import SuiteId

# An interval between 5 minutes and 90 days: shorter would keep a host busy with its own schedule; longer is a cron
# expression's job ("0 3 1 */6 *").
MIN_INTERVAL_S = 300
MAX_INTERVAL_S = 90 * 86400
MAX_HOSTS = 16  # as a suite run's
Outcome = Literal["started", "skipped", "failed"]
Trigger = Literal["beat", "run-now"]
# one host label as key=value: the hosts carrying it when the schedule fires
LabelSelector = Annotated[str, StringConstraints(max_length=130, pattern=r"^[A-Za-z0-9_.-]{1,64}=[^\x00=]{1,64}$")]
# checked by app.schedules.cron, whose refusals say what is wrong (a pattern here would only say "does not match")
CronText = Annotated[str, StringConstraints(min_length=1, max_length=100)]
Title = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[^\x00]*$")]


class Recurrence(BaseModel):
    """Exactly one: every interval_s seconds, or a 5-field cron expression in UTC (app/schedules/cron.py)."""

    model_config = {"extra": "forbid"}

    interval_s: Annotated[int, Field(ge=MIN_INTERVAL_S, le=MAX_INTERVAL_S), JSON_NUMBER] | None = None
    cron: CronText | None = None

    @field_validator("cron")
    @classmethod
    def _cron(cls, v: str | None) -> str | None:
        if v is not None:
            crontab.check(v, utcnow())  # CronError is a ValueError: 422 naming the field and saying why
            return " ".join(v.split())
        return v

    @model_validator(mode="after")
    def _one(self) -> "Recurrence":
        if (self.interval_s is None) == (self.cron is None):
            raise ValueError("give exactly one of interval_s and cron")
        return self


class ScheduleIn(Recurrence):
    """A schedule: the suite (built in or saved-<n>), where (host_ids, or a label as key=value resolved when it
    fires), when (interval_s or cron), and whether it is on."""

    title: Title
    suite: SuiteId
    host_ids: Annotated[list[BodyId], Field(min_length=1, max_length=MAX_HOSTS)] | None = None
    label: LabelSelector | None = None
    enabled: bool = True

    @model_validator(mode="after")
    def _target(self) -> "ScheduleIn":
        if (self.host_ids is None) == (self.label is None):
            raise ValueError("give exactly one of host_ids and label")
        if self.host_ids is not None and len(set(self.host_ids)) != len(self.host_ids):
            raise ValueError("host_ids: a host is listed twice")
        return self


class SkippedHost(BaseModel):
    host_id: int
    name: str | None
    reason: str


class FiringPublic(BaseModel):
    id: int
    schedule_id: int
    fired_at: datetime
    due_at: datetime | None
    trigger: Trigger
    outcome: Outcome
    reason: str | None
    suite_run_id: int | None
    host_ids: list[int]  # the hosts the suite run started on
    skipped: list[SkippedHost]  # the hosts left out, and why


class FiringsPublic(BaseModel):
    data: list[FiringPublic]
    count: int


class SchedulePublic(BaseModel):
    id: int
    title: str
    suite: str
    suite_title: str | None  # None: the saved suite was deleted (each firing fails until the schedule changes)
    host_ids: list[int] | None
    label: str | None
    interval_s: int | None
    cron: str | None
    enabled: bool
    created_by: str | None
    created_at: datetime
    updated_at: datetime
    next_fire_at: datetime | None  # None while disabled
    next: list[datetime]  # the next three fire times (none while disabled)
    last_firing: FiringPublic | None


class SchedulesPublic(BaseModel):
    data: list[SchedulePublic]


class PreviewPublic(BaseModel):
    next: list[datetime]  # the next three fire times from now, as the server computes them
