"""The report of a set of runs, as one JSON document (GET /api/report): the hosts with their inventory, each run as
GET /api/runs/{id} gives it (its stored result: rows with mean, sd, CI, peak with its arithmetic, efficiency, the
references, the verdict and flags; the trace summary), the trace's points, and the methodology of each area."""
from datetime import datetime

from pydantic import BaseModel, Field

from app.hosts.schemas import HostPublic
from app.jobs.schemas import RunPublic
from app.reports.methodology import Area
from app.reports.summary import ReportSummary


class ReportRun(RunPublic):
    area: Area | None = Field(description="cpu, memory, disk, network or gpu: the section the run belongs to")
    # A trace run's measured samples as [seconds since the first, value]; at most TRACE_POINTS of them: past that
    # each point is the mean of `trace_bucket` consecutive samples (the summary's figures are from all of them).
    trace_points: list[tuple[float, float]] = []
    trace_bucket: int = 1


class ReportArea(BaseModel):
    area: Area
    title: str
    run_ids: list[int]
    methodology: str
    source: str = Field(description="the methodology document this paragraph summarises")


class Report(BaseModel):
    generated_at: datetime
    selection: str = Field(description="how the set was named: 'runs 3, 4' or 'job 7'")
    summary: ReportSummary = Field(description="the first screen: what was measured, the headlines with their "
                                               "verdicts, what to look at first")
    hosts: list[HostPublic]
    runs: list[ReportRun]
    areas: list[ReportArea]
    statistics: str = Field(description="how the tables' figures are computed (docs/methodology/statistics.md)")
