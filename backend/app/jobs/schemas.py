from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from hostbench_common.runstatus import RunStatus
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model, field_validator

from app.core.bounds import BodyId
from app.experiments.registry import EXPERIMENTS, PARAMS
from app.results.schemas import RunHeadline, RunResult
from app.results.verdict import Verdict


def _iso_datetime(value: Any) -> Any:
    """A date-time in a query is ISO 8601 (2026-11-24T18:00:00Z), never a bare number that pydantic would read as a
    Unix time: the OpenAPI document says date-time, and a number is refused as it says."""
    if isinstance(value, str) and not (len(value) >= 10 and value[4] == "-" and value[7] == "-"):
        raise ValueError("expected an ISO 8601 date-time, e.g. 2026-11-24T18:00:00Z")
    return value


IsoDatetime = Annotated[datetime, BeforeValidator(_iso_datetime)]
HostIds = Annotated[list[BodyId], Field(min_length=1, max_length=16)]


class JobCreateBase(BaseModel):
    """A job's request body; each experiment's (e.g. CpuJobCreate) narrows experiment and params."""

    model_config = ConfigDict(extra="forbid")

    host_ids: HostIds
    experiment: str
    params: BaseModel

    @field_validator("host_ids")
    @classmethod
    def _distinct(cls, v: list[int]) -> list[int]:
        if len(set(v)) != len(v):
            raise ValueError("host ids must be distinct")
        return v


def _job_create(kind: str) -> type[JobCreateBase]:
    """The request body of one experiment: its hosts (one per role, in role order) and its params."""
    e = EXPERIMENTS[kind]
    model = PARAMS[kind]
    hosts: Any = Annotated[list[BodyId], Field(min_length=e.hosts, max_length=e.hosts)] if e.hosts > 1 else HostIds
    experiment: Any = Literal[kind]
    doc = (f"host_ids = [{', '.join(f'{role} host' for role, _ in e.roles)}]: {e.description}" if e.hosts > 1
           else e.description)
    name = "".join(part.title() for part in kind.split("_")) + "JobCreate"
    return create_model(name, __base__=JobCreateBase, __module__=__name__, __doc__=doc,
                        host_ids=(hosts, ...), experiment=(experiment, ...),
                        params=(model, Field(default_factory=model)))


JOB_CREATE = tuple(_job_create(kind) for kind in EXPERIMENTS)
if TYPE_CHECKING:  # one model per experiment, made from the table: a type checker sees their base
    JobCreate = JobCreateBase
else:
    JobCreate = Annotated[Union[JOB_CREATE], Field(discriminator="experiment")]  # noqa: UP007


class RunPhase(BaseModel):
    """The runner's current phase of a run: its kernel, or one reference tool ("hpcc", 2 of 8, "HPL N = 8,064, 2
    processes", started at, usually this long, stopped at the cap)."""

    kind: Literal["kernel", "reference"]
    tool: str | None = None
    what: str = ""
    index: int | None = None  # reference runs: this one (1-based) ...
    of: int | None = None  # ... of so many
    started_at: float  # Unix time
    typical_s: float | None = None
    cap_s: float | None = None


class RunPublic(BaseModel):
    id: int
    job_id: int
    host_id: int
    host_name: str
    experiment: str
    params: dict[str, Any]
    status: RunStatus
    status_reason: str | None
    attempt: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    expected_duration_s: float  # the cap: measuring at most plus the reference tools' allowance (the deadline's base)
    # What such a run usually takes (hostbench_common/estimate.py): the estimate shown, `expected_duration_s` beside
    # it as the cap; null for a serving run (it lasts as long as its driver).
    typical_duration_s: float | None = None
    # What the runner is doing now, as it last reported it (a running run; null before the first report).
    phase: RunPhase | None = None
    progress: float
    last_seq: int
    unit: str
    kernel_info: dict[str, Any] | None
    # The stored result (app.jobs.stored): computed once, never by a read. A list read (GET /api/runs) leaves it out
    # unless asked for (`detail=full`) and carries the headline and verdict below instead.
    result: RunResult | None
    headline: RunHeadline | None = None  # the stored result's headline, apart (lists show it)
    verdict: Verdict | None = None  # the stored result's verdict, apart (null: no result)
    # The stored result was computed against peaks that have changed since: served as stored while the background
    # recompute runs (app.jobs.stored), then replaced.
    result_updating: bool = False
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
    # How many runs match, counted exactly up to COUNT_BOUND; beyond it `count` is the bound and `count_more` is
    # true ("more than 10,000"): a count that stays cheap at a million runs.
    count: int
    count_more: bool = False
    # The next page (keyset, stable while runs are added): pass it as `before_id`; null on the last page.
    next_before_id: int | None = None


class JobPublic(BaseModel):
    id: int
    created_at: datetime
    experiment: str
    created_by: str | None = None
    runs: list[RunPublic]


class SamplePublic(BaseModel):
    """One sample, as a runner sends it (runner_api.schemas.SampleIn checks the same fields, with bounds), as it is
    stored, streamed live and exported: SAMPLE_FIELDS is this order, everywhere."""

    model_config = ConfigDict(from_attributes=True)

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


SAMPLE_FIELDS = tuple(SamplePublic.model_fields)


class SamplesPublic(BaseModel):
    data: list[SamplePublic]
    count: int
    # keyset paging: pass as after_seq for the next page; null when this page was not full (the last one, for now)
    next_after_seq: int | None = None


class ReferenceEstimate(BaseModel):
    tool: str
    what: str  # the run in a few words ("HPL N = 5,760, 2 processes")
    typical_s: float


class JobEstimate(BaseModel):
    """How long a job usually takes (hostbench_common/estimate.py) and its cap, apart: on each host it runs on, the
    longest of them; the reference runs it would plan on that host with their typical times."""

    typical_s: float
    cap_s: float  # measuring at most plus the reference tools' allowance: the deadline's base
    references: list[ReferenceEstimate]


class DurationTerms(BaseModel):
    """How a job's expected duration follows from its params: configurations = the product of the lengths of the
    `per_item` lists that apply (see `applies`); seconds = configurations x (warmup_s + repeats x duration_s), with
    repeats at max_repeats when stable_cv > 0 and `fixed` values in place of the params; plus
    `reference_allowance_s` per item of the `reference_per` list (or once) when reference is on. When the job gives
    a list for the `fan_out` parameter (op), it makes one run per item: the sum of the above over each item."""

    per_item: list[str]
    fan_out: str | None = Field(None, description="the parameter a job may give a list of: one run per item (op)")
    fixed: dict[str, float]
    reference_allowance_s: float
    reference_per: str | None


class AxesPublic(BaseModel):
    """What a result row's `threads` and `block_bytes` are, in words (hostbench_common.axes)."""

    count: str = Field(description="one of `threads`: 'thread', 'stream'")
    counts: str = Field(description="more than one, and the axis title: 'threads', 'streams'")
    size: str = Field(description="the axis title of `block_bytes`: 'block size', 'message size'")
    sized: str = Field(description="after a size: 'blocks' (8 KiB blocks), 'messages' (1 B messages)")


class ExperimentPublic(BaseModel):
    kind: str
    title: str
    description: str
    unit_hint: str = Field(description="the unit of its figures, unless its op is in units_by_op")
    units_by_op: dict[str, str]
    roles: list[str] = Field(description="one per host, in host_ids order: [host], or [serve, drive] (two hosts)")
    run_kinds: list[str] = Field(description="the experiment of each role's run, as runs show it")
    applies: dict[str, dict[str, list[Any]]] = Field(
        description="parameters that apply only while another has one of these values: {sizes: {op: [latency]}}")
    duration: DurationTerms
    reference_tools: list[str] = Field(description="what reference: true runs after the kernel, on the driving "
                                                   "host for two hosts (e.g. hpcc, likwid-bench)")
    needs_gpu: bool = Field(description="it runs on a GPU: refused (422 on host_ids) on a host whose inventory's "
                                        "`gpus` lists none")
    parameters: dict[str, Any]
    axes: AxesPublic = Field(description="what its result rows' threads and block sizes are, in words")
    axes_by_op: dict[str, AxesPublic] = Field(default_factory=dict,
                                              description="where an op's rows read otherwise (udp_stream: datagrams)")


class ExperimentsPublic(BaseModel):
    data: list[ExperimentPublic]
