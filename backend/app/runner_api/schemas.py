from typing import TYPE_CHECKING, Annotated, Any, Literal

from hostbench_common import resultfields
from hostbench_common.runstatus import RunStatus
from pydantic import AllowInfNan, BaseModel, ConfigDict, Field, StrictBool, create_model, field_validator

from app.core.bounds import JSON_NUMBER, MAX_ATTEMPT, MAX_BYTES, MAX_SEQ, BodyId, Inventory, JsonInt, JsonNumber
from app.hosts import names

Number = JsonNumber  # finite
# A block size in bytes (a sample's or a result's block_bytes, a trend's): from the least the kernels declare for a
# result's block_bytes (hostbench_common.resultfields) to MAX_BYTES, a cap of ours (a bigint column).
BLOCK_BYTES: tuple[float, int] = (resultfields.BOUNDS["block_bytes"].minimum or 0, MAX_BYTES)
BlockBytes = Annotated[int, Field(ge=BLOCK_BYTES[0], le=BLOCK_BYTES[1]), JSON_NUMBER]


# A result's and a sample's threads and repeat, within the bounds the kernels declare (hostbench_common.resultfields
# reads them from `--describe`): not a second copy.
_T, _R, _SR = resultfields.THREADS, resultfields.REPEAT, resultfields.SAMPLE_REPEAT
Threads = Annotated[int, Field(ge=_T[0], le=_T[1]), JSON_NUMBER]
Repeat = Annotated[int, Field(ge=_R[0], le=_R[1]), JSON_NUMBER]
SampleRepeat = Annotated[int, Field(ge=_SR[0], le=_SR[1]), JSON_NUMBER]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunnerRegister(_Strict):
    registration_token: str = Field(min_length=8, max_length=200)
    name: str = Field(min_length=1, max_length=512)  # normalised below; at most names.MAX_NAME after it
    hostname: str = Field(min_length=1, max_length=255)
    version: str = Field("", max_length=64)
    inventory: Inventory = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)
    # /etc/machine-id: a runner joining again from the same machine gets its host back (app.hosts.enrol).
    machine_id: str | None = Field(None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._:-]+$")

    @field_validator("name")
    @classmethod
    def _normal_name(cls, v: str) -> str:
        return names.normalise(v)  # NFKC, trimmed, nothing invisible (app/hosts/names.py)


class RunnerRegistered(BaseModel):
    host_id: int
    runner_token: str


class RunRef(_Strict):
    run_id: BodyId
    attempt: Annotated[int, Field(ge=0, le=MAX_ATTEMPT), JSON_NUMBER]


class Heartbeat(_Strict):
    inventory: Inventory | None = None
    run: RunRef | None = None
    version: str | None = Field(None, max_length=64)


class HeartbeatAck(BaseModel):
    server_time: float
    # The admin asked for a new credential: call POST /api/runner/credential/rotate.
    rotate_credential: bool = False
    # When the server wants the next heartbeat: sooner while a run is on than while idle (an idle runner's long
    # polls already show it alive), so a large idle fleet costs the server less.
    heartbeat_s: float = Field(default=5.0, ge=1, le=60)


class RunnerCredential(BaseModel):
    runner_token: str


class Assignment(BaseModel):
    run_id: int
    attempt: int
    experiment: str
    params: dict[str, Any]
    deadline_s: float
    lease_s: float


class AttemptBody(_Strict):
    attempt: JsonInt = Field(ge=1, le=MAX_ATTEMPT)


PhaseIndex = Annotated[int, Field(ge=1, le=1000), JSON_NUMBER]
PhaseSeconds = Annotated[float, AllowInfNan(False), Field(ge=0, le=10**7), JSON_NUMBER]


class PhaseIn(_Strict):
    """What the runner is doing now (app.jobs.schemas.RunPhase): its kernel, or reference tool `index` of `of`."""

    kind: Literal["kernel", "reference"]
    tool: str | None = Field(None, max_length=32)
    what: str = Field("", max_length=200)
    index: PhaseIndex | None = None
    of: PhaseIndex | None = None
    started_at: Number
    typical_s: PhaseSeconds | None = None
    cap_s: PhaseSeconds | None = None


class LeaseIn(AttemptBody):
    """A lease renewal; `phase` when the runner has one to report (the run page shows it)."""

    phase: PhaseIn | None = None


class RunStart(AttemptBody):
    kernel_info: dict[str, Any] = Field(default_factory=dict)


Port = Annotated[int, Field(ge=1, le=65535), JSON_NUMBER]


class ReferencePorts(_Strict):
    """The reference servers a two-host serve run offers its peer: one port per tool, only these tools."""

    iperf3: Port | None = None
    sockperf: Port | None = None


class Listening(AttemptBody):
    port: Port
    # Only when the job asked for reference tools: the ports of the servers the serving runner started.
    reference_ports: ReferencePorts | None = None


class LeaseAck(BaseModel):
    lease_expires_at: float


class SampleIn(BaseModel):
    model_config = ConfigDict(extra="ignore")  # the kernel may add fields in a later protocol version

    seq: JsonInt = Field(ge=0, le=MAX_SEQ)
    t: Number
    interval_s: Number = Field(ge=0, le=3600)
    threads: Threads
    repeat: SampleRepeat
    warmup: StrictBool
    value: Number
    unit: str = Field(max_length=16)
    op: str | None = Field(None, max_length=32)
    block_bytes: BlockBytes | None = None


class SamplesIn(AttemptBody):
    samples: list[SampleIn] = Field(min_length=1, max_length=1000)


class SamplesAck(BaseModel):
    inserted: int
    max_seq: int
    # seqs already stored with different fields: refused (the first stays), and logged by the server
    conflicts: list[int] = []


class _ResultLine(BaseModel):
    """A kernel's result line (docs/kernel-protocol.md): the fields every line has, the rest as the kernel wrote
    them. ResultIn adds a typed field for each figure the kernels declare a range for."""

    model_config = ConfigDict(extra="allow")

    threads: Threads
    repeat: Repeat
    value: Number
    unit: str = Field(max_length=16)
    verified: StrictBool
    op: str | None = Field(None, max_length=32)
    block_bytes: BlockBytes | None = None

    def raw(self) -> dict[str, Any]:
        """The line as stored: what the runner sent, the fields above always (null when not sent), a declared
        figure only when sent (no null for every figure another kernel writes)."""
        out = self.model_dump(exclude_unset=True)
        for name in _ResultLine.model_fields:
            out.setdefault(name, getattr(self, name))
        return out


def _figure(key: str) -> Any:
    """A declared figure: a finite number or an integer within the range its kernels declare, or null (not
    known). Constraints before JSON_NUMBER (app.core.bounds)."""
    rng = resultfields.BOUNDS[key]
    bounds = Field(ge=rng.minimum, gt=rng.exclusive_minimum, le=rng.maximum)  # None: no bound that side
    if resultfields.TYPES[key] == "integer":
        return Annotated[int, bounds, JSON_NUMBER] | None
    return Annotated[float, AllowInfNan(False), bounds, JSON_NUMBER] | None


def _figures() -> dict[str, Any]:
    """Field definitions for every figure with a declared range (hostbench_common.resultfields.BOUNDS) that
    _ResultLine does not type itself; an object's members (latency_us.p50) in a model of their own."""
    out: dict[str, Any] = {}
    members: dict[str, dict[str, Any]] = {}
    for key in resultfields.BOUNDS:
        head, _, member = key.partition(".")
        if head in _ResultLine.model_fields:
            continue
        if member:
            members.setdefault(head, {})[member] = (_figure(key), None)
        else:
            out[key] = (_figure(key), None)
    for head, fields in members.items():
        name = "".join(w.title() for w in head.split("_")) + "In"
        model = create_model(name, __config__=ConfigDict(extra="allow"), **fields)
        out[head] = (model | None, None)
    return out


if TYPE_CHECKING:
    ResultIn = _ResultLine
else:
    # The upload model of a result line: refuses (422, the field named) a figure outside its declared range;
    # the OpenAPI document shows each range (minimum / exclusiveMinimum / maximum).
    ResultIn = create_model("ResultIn", __base__=_ResultLine, __module__=__name__, __doc__=_ResultLine.__doc__,
                            **_figures())


class ReferenceIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    tool: str = Field(max_length=32)
    status: Literal["ok", "unavailable", "failed", "none"]
    reason: str | None = Field(None, max_length=2000)
    note: str | None = Field(None, max_length=2000)
    argv: list[str] = Field(default_factory=list, max_length=200)
    matches: dict[str, Any] = Field(default_factory=dict)
    metrics: list[dict[str, Any]] = Field(default_factory=list, max_length=10000)


class RunFinish(AttemptBody):
    status: Literal[RunStatus.succeeded, RunStatus.failed, RunStatus.untrusted]  # what a runner may report
    reason: str | None = Field(None, max_length=2000)
    results: list[ResultIn] = Field(default_factory=list, max_length=resultfields.MAX_RESULT_LINES)
    references: list[ReferenceIn] = Field(default_factory=list, max_length=100)
    end: dict[str, Any] | None = None
