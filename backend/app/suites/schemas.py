from datetime import datetime
from typing import Annotated, Any, Literal

from hostbench_common.runstatus import RunStatus
from pydantic import BaseModel, Field

from app.core.bounds import Id

SuiteStatus = Literal["running", "succeeded", "failed", "cancelled"]
SuiteId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[a-z0-9_-]+$")]


class SuiteItemPublic(BaseModel):
    experiment: str
    params: dict[str, Any]
    needs: str | None = None


class SuiteItemIn(BaseModel):
    model_config = {"extra": "forbid"}

    experiment: Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[a-z0-9_]+$")]
    params: dict[str, Any] = Field(default_factory=dict)
    needs: Literal["gpu"] | None = None


class SavedSuiteIn(BaseModel):
    """A suite of a person's own; also the import format (GET /api/suites/{id} is the export)."""

    model_config = {"extra": "ignore"}  # an export carries id, owner and duration: ignored on import

    title: Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\x00]*$")]
    description: Annotated[str, Field(max_length=2000, pattern=r"^[^\x00]*$")] = ""
    items: Annotated[list[SuiteItemIn], Field(min_length=1, max_length=50)]


class SuitePublic(BaseModel):
    id: str
    title: str
    description: str
    items: list[SuiteItemPublic]
    builtin: bool = True
    created_by: str | None = None  # a saved suite's owner
    # on one host (items that need two hosts or a GPU left out), in seconds: what the form shows before hosts are
    # picked; the suite run's own figure counts the hosts picked
    expected_duration_one_host_s: float


class SuiteEstimate(BaseModel):
    """A suite on the hosts picked: what it usually takes (the longest host's sum of its runs' typical times,
    hostbench_common/estimate.py; hosts of one machine, measured in turn, add up: app.jobs.turns) and its cap (the
    sum of its jobs' expected durations, as a suite run stores)."""

    typical_s: float
    cap_s: float
    per_host: dict[int, float]  # host id -> the typical seconds of its runs, one after another


class SuitesPublic(BaseModel):
    data: list[SuitePublic]


class SuiteRunCreate(BaseModel):
    model_config = {"extra": "forbid"}

    suite: SuiteId
    host_ids: Annotated[list[Id], Field(min_length=1, max_length=16)]
    # A host for the two-host items only: it serves and every host picked drives to it; it runs nothing else.
    # Without one, a two-host item runs between the first two hosts picked (the first serves).
    peer_host_id: Id | None = None


class SuiteRunRun(BaseModel):
    id: int
    job_id: int
    host_id: int
    experiment: str
    op: str | None  # the run's one op, where its kind has ops
    status: RunStatus
    expected_duration_s: float  # its cap
    typical_duration_s: float | None = None  # what it usually takes (null: a serving run, as long as its driver)
    # How it ended (issue 32: the suite run page shows each run's figure, verdict, duration and end time)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    headline: str | None = None  # the figure that sums it up, or why there is none (RunResult.headline.text)
    verdict: str | None = None


class SuiteRunPublic(BaseModel):
    id: int
    suite: str
    title: str
    created_at: datetime
    created_by: str | None
    cancelled_by: str | None
    host_ids: list[int]
    peer_host_id: int | None = None  # the host that served every two-host item, if one was named
    skipped: list[str]  # items left out on these hosts, and why
    expected_duration_s: float  # the cap: the sum of its jobs' expected durations (hostbench_common.suites)
    # The estimate: what its runs usually take (hostbench_common/estimate.py), one host's after another's, the
    # longest host's sum (hosts run side by side)
    typical_duration_s: float | None = None
    # "running" while any run is queued, dispatched or running; else "cancelled" if one was cancelled, "failed" if
    # one failed or was untrusted, else "succeeded"
    status: SuiteStatus
    runs_total: int
    runs_done: int
    progress: float  # runs ended / runs in all, 0..1
    runs: list[SuiteRunRun]


class SuiteRunsPublic(BaseModel):
    data: list[SuiteRunPublic]
