"""Hosts tested together: the request and the matrix (app.mesh.service)."""
from datetime import datetime
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from app.core.bounds import BodyId
from app.experiments.registry import PARAMS
from app.jobs.models import RunStatus

# all_pairs: each unordered pair once (n - 1 rounds); all_pairs_both_ways: each ordered pair once (2(n - 1));
# many_to_one: every host picked drives to server_host_id at once (one round).
Mode = Literal["all_pairs", "all_pairs_both_ways", "many_to_one"]
MeshOp = Literal["tcp_stream", "tcp_rr"]
# The cell's verdict: the band judge's (PASS, FAIL), DISTURBED (the measurement was not valid: its validity
# verdict says why), NO BASELINE (no band to judge against), or none yet (not measured).
CellVerdict = Literal["PASS", "FAIL", "DISTURBED", "NO BASELINE"]
# a mesh's own status: waiting for its first run (the run status's queued), running, done, cancelled
MeshStatus = Literal[RunStatus.queued, "running", "done", "cancelled"]


class MeshCreate(BaseModel):
    """N hosts tested together over TCP: every job a network_pair job (tcp_stream for Mbit/s, tcp_rr for the
    round-trip latency), run in rounds so that no host serves and drives at once."""

    model_config = ConfigDict(extra="forbid")

    mode: Mode
    host_ids: list[BodyId] = Field(min_length=2, max_length=16, description="all pairs: the hosts; many to one: "
                                   "the clients (the server is server_host_id)")
    server_host_id: BodyId | None = Field(None, description="many_to_one only: the host every client drives to")
    ops: list[MeshOp] = Field(["tcp_stream", "tcp_rr"], min_length=1, max_length=2)
    params: dict[str, Any] = Field(default_factory=dict, description="the network_pair parameters (NetworkPairParams"
                                   ") every job shares, less op; each op's are checked as that job's would be")

    @field_validator("host_ids", "ops")
    @classmethod
    def _distinct(cls, v: list[Any]) -> list[Any]:
        if len(set(v)) != len(v):
            raise ValueError("values must be distinct")
        return v

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.mode == "many_to_one":
            if self.server_host_id is None:
                raise ValueError("many_to_one needs server_host_id, the host every client drives to")
            if self.server_host_id in self.host_ids:
                raise ValueError("server_host_id cannot also be one of the clients (host_ids)")
        elif self.server_host_id is not None:
            raise ValueError("server_host_id is for many_to_one only; all pairs take every host both roles")
        if "op" in self.params:
            raise ValueError("params.op: the ops are given by `ops`")
        for op in self.ops:
            try:
                PARAMS["network_pair"].model_validate({**self.params, "op": op})
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(x) for x in first["loc"])
                raise ValueError(f"params ({op}): {where}: {first['msg']}") from None
        return self

    def job_params(self, op: str) -> dict[str, Any]:
        return PARAMS["network_pair"].model_validate({**self.params, "op": op}).model_dump(mode="json")


class MeshHost(BaseModel):
    id: int
    name: str


class MeshCell(BaseModel):
    """One link: client (driving) to server (serving), its round, its figures and their verdicts."""

    server_host_id: int
    client_host_id: int
    round: int
    status: str  # the worst of its runs': queued, running, succeeded, failed, ...
    mbps: float | None = None  # tcp_stream: the driving run's mean, Mbit/s
    rtt_us: float | None = None  # tcp_rr: the median round trip, µs
    share: float | None = None  # many to one: this client's share of the aggregate Mbit/s
    stream_run_id: int | None = None
    rr_run_id: int | None = None
    validity: str | None = None  # the worst validity verdict of its runs (app.results.verdict), None until done
    verdict: CellVerdict | None = None
    verdict_reason: str | None = None


class MeshLink(BaseModel):
    server_host_id: int
    client_host_id: int
    mbps: float


class MeshSlowHost(BaseModel):
    host_id: int
    name: str
    mean_mbps: float  # the mean Mbit/s of every link it is on, serving or driving


class MeshPublic(BaseModel):
    id: int
    created_at: datetime
    created_by: str | None
    mode: Mode
    hosts: list[MeshHost]  # all pairs: the hosts; many to one: the clients
    server: MeshHost | None  # many to one: the server
    ops: list[str]
    params: dict[str, Any]
    rounds: int
    status: MeshStatus
    runs: dict[str, int]  # runs by status
    wall_s: float | None  # from its first run's start to its last run's end (None until it started)
    cells: list[MeshCell]
    slowest_link: MeshLink | None
    slowest_host: MeshSlowHost | None
    aggregate_mbps: float | None = None  # many to one: the clients' Mbit/s added up
    overlap_s: float | None = None  # many to one: seconds all clients' stream runs ran at once


class MeshesPublic(BaseModel):
    data: list[MeshPublic]
