from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.bands.schemas import BandUsed, FigureKey, KindBy
from app.core.bounds import BodyId
from app.hosts.schemas import LABEL_KEY_MAX, LABEL_KEY_PART, LABEL_VALUE_MAX, HostHealth
from app.suites.schemas import SuiteId

HostVerdictKind = Literal["PASS", "FAIL", "DISTURBED", "NO_BASELINE"]
VERDICTS: tuple[HostVerdictKind, ...] = ("FAIL", "DISTURBED", "NO_BASELINE", "PASS")  # worst first
# a label as hosts have them (app.hosts.schemas): its key, and a value that is not empty
Label = Annotated[str, Field(min_length=3, max_length=LABEL_KEY_MAX + 1 + LABEL_VALUE_MAX,
                             pattern=rf"^{LABEL_KEY_PART}=\S.{{0,{LABEL_VALUE_MAX - 1}}}$",
                             description="every live host with this label key=value")]
MAX_HOSTS = 200  # hosts one check runs on


class CheckCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    suite: SuiteId = Field(description="quick, standard, burn-in, or any suite (saved-<id> too)")
    host_ids: list[BodyId] | None = Field(None, min_length=1, max_length=MAX_HOSTS)
    label: Label | None = None
    kind_by: KindBy = "cpu"
    peer_host_id: BodyId | None = None
    drain_on_fail: bool = Field(False, description="drain each FAILed host's Slurm node with the check's reason "
                                "(admins only; the server needs HOSTBENCH_SLURM_DRAIN=1; audited)")

    @model_validator(mode="after")
    def _one(self) -> "CheckCreate":
        if (self.host_ids is None) == (self.label is None):
            raise ValueError("give host_ids or label, one of them")
        return self


class Figure(BaseModel):
    """One figure of a host in a check: judged (pass/fail/no_baseline against a band), disturbed (its
    measurement was not valid: its verdict and why), or not judged (not the figure its experiment stands for: a
    disk or network row the host's CPU quota throttled measured the quota)."""

    status: Literal["pass", "fail", "no_baseline", "disturbed", "not_judged"]
    run_id: int
    figure: FigureKey
    value: float | None
    unit: str
    band: BandUsed | None = None
    distance: float | None = None
    reason: str


class HostVerdictPublic(BaseModel):
    host_id: int
    host_name: str
    verdict: HostVerdictKind | Literal["PENDING"]
    previous: str | None = None
    judged_at: datetime | None = None
    reason: str
    in_turn: str | None = Field(None, description="hosts of one machine are measured one after another: \"measured "
                                "in turn: same machine as flt2 (the same running kernel (boot id)); 2nd of 4\"")
    counts: dict[str, int] = Field(default_factory=dict)
    figures: list[Figure] = Field(default_factory=list, description="failures first, then disturbed, no baseline, "
                                                                    "not judged, passed")
    webhook_status: str | None = None
    webhook_detail: str | None = None


class CheckPublic(BaseModel):
    id: int
    suite: str
    title: str
    suite_run_id: int | None
    suite_status: str | None
    label: str | None
    kind_by: str
    drain_on_fail: bool
    created_by: str | None
    created_at: datetime
    judged_at: datetime | None
    status: Literal["running", "judged"]
    counts: dict[str, int]
    hosts: list[HostVerdictPublic]


class ChecksPublic(BaseModel):
    data: list[CheckPublic]


class FleetHealthHost(BaseModel):
    host_id: int
    host_name: str
    latest: HostHealth | None
    checks: list[HostHealth]


class FleetHealth(BaseModel):
    counts: dict[str, int]
    hosts: list[FleetHealthHost]
