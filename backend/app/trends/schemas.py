"""What the trends routes answer and take."""
from datetime import datetime
from typing import Annotated, Literal

from hostbench_common import resultfields
from pydantic import AllowInfNan, BaseModel, Field, StringConstraints

from app.core.bounds import JSON_NUMBER, BodyId
from app.experiments.registry import RunExperimentKind
from app.hosts.schemas import HostHealth
from app.runner_api.schemas import BlockBytes

LabelKey = Literal["provider", "instance_type", "region"]
ThresholdKind = Literal["below", "above", "drop_pct"]
EventKind = Literal["threshold", "regression", "improvement"]


class MetricKey(BaseModel):
    """A metric: a run kind's figure at one configuration (op, threads, block size where the kind has them)."""

    experiment: str
    op: str | None
    threads: int
    block_bytes: int | None = None


class MetricPublic(MetricKey):
    unit: str
    lower_is_better: bool
    points: int  # in the runs looked at
    last_at: datetime


class MetricsPublic(BaseModel):
    data: list[MetricPublic]
    runs_scanned: int


class SeriesPoint(BaseModel):
    run_id: int
    host_id: int
    host_name: str
    at: datetime  # when the run finished
    mean: float
    ci95_low: float | None
    ci95_high: float | None
    n: int
    verdict: str
    # whether the detector used it: only valid points are; the others are shown with the reason
    used: bool
    excluded_reason: str | None = None


class ChangePublic(BaseModel):
    run_id: int  # the first run of the new level
    at: datetime
    detected_run_id: int  # the run whose arrival made the change significant
    kind: Literal["regression", "improvement"]
    before: float  # median of the baseline
    after: float  # median of the newest window
    effect: float  # after / before - 1
    p_value: float


class Method(BaseModel):
    name: str
    baseline_min: int
    baseline_max: int
    test_window: int
    alpha: float
    min_effect: float
    doc: str = "docs/methodology/trends.md"


class ThresholdPublic(MetricKey):
    id: int
    host_id: int | None
    label_key: str | None
    label_value: str | None
    kind: ThresholdKind
    value: float
    created_by: str | None
    created_at: datetime


class EventPublic(MetricKey):
    id: int
    at: datetime
    run_id: int
    host_id: int
    host_name: str
    threshold_id: int | None
    kind: EventKind
    value: float
    unit: str
    text: str
    webhook_status: str
    webhook_detail: str | None
    email_status: str
    email_detail: str | None


class EventsPublic(BaseModel):
    data: list[EventPublic]
    count: int


class SeriesPublic(BaseModel):
    metric: MetricKey
    unit: str
    lower_is_better: bool
    points: list[SeriesPoint]  # oldest first
    has_more: bool  # older points exist before the first one (page with before=)
    excluded: int  # points shown but not used by the detector (verdict other than valid)
    changes: list[ChangePublic]
    method: Method
    thresholds: list[ThresholdPublic]
    events: list[EventPublic]


class ThresholdsPublic(BaseModel):
    data: list[ThresholdPublic]
    count: int


# one label as key=value
LabelScope = Annotated[str, StringConstraints(
    max_length=80, pattern=r"^(provider|instance_type|region)=[^\x00]{1,64}$")]
Op = Annotated[str, StringConstraints(min_length=1, max_length=32, pattern=r"^[a-z0-9_]+$")]


class ThresholdCreate(BaseModel):
    """Where: a host (host_id), a label ("instance_type=m5.large", as the run's label snapshot had it), both (that
    host while it had the label), or neither (every host). The metric. below / above a value in the metric's unit,
    or drop_pct: worse (in the figure's direction) by more than value % than the median of the metric's previous
    ten valid points in that scope."""

    model_config = {"extra": "forbid"}

    host_id: BodyId | None = None
    label: LabelScope | None = None
    experiment: RunExperimentKind
    op: Op | None = None
    threads: Annotated[int, Field(ge=resultfields.THREADS[0], le=resultfields.THREADS[1]), JSON_NUMBER]
    block_bytes: BlockBytes | None = None
    kind: ThresholdKind
    value: Annotated[float, Field(ge=0, le=1e15), AllowInfNan(False), JSON_NUMBER]


class NotifyPublic(BaseModel):
    webhook_url: str | None
    email_to: str | None
    smtp_configured: bool
    email_note: str | None  # why no e-mail goes out, when none does
    allowed_hosts: list[str]
    updated_by: str | None
    updated_at: datetime | None


# http(s), a host, no credentials (app.trends.notify checks where it leads)
WebhookUrl = Annotated[str, StringConstraints(max_length=2000, pattern=r"^https?://[^/?#@\s]+([/?#]\S*)?$")]


class NotifyUpdate(BaseModel):
    model_config = {"extra": "forbid"}

    webhook_url: WebhookUrl | None = None
    email_to: Annotated[str, StringConstraints(max_length=320, pattern=r"^[^@\s]+@[^@\s]+$")] | None = None


class FleetMetric(BaseModel):
    key: str
    title: str
    unit: str
    lower_is_better: bool = False


class FleetCell(BaseModel):
    value: float
    unit: str
    efficiency: float | None
    run_id: int
    at: datetime
    threads: int
    block_bytes: int | None
    verdict: str
    outlier: bool = False
    outlier_note: str | None = None


class FleetHost(BaseModel):
    host_id: int
    name: str
    online: bool
    labels: dict[str, str]
    cells: dict[str, FleetCell]
    # A headline with no usable figure in the host's newest runs, and why: "no valid run yet; 3 disturbed"
    missing: dict[str, str] | None = None
    # The latest verdict of each health check the host had, newest first (app.checks; hosts.health)
    health: list[HostHealth] = Field(default_factory=list)


class FleetPublic(BaseModel):
    metrics: list[FleetMetric]
    hosts: list[FleetHost]
    outlier_method: str
    group_by: LabelKey


