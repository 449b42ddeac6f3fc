from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query, Request, Response
from hostbench_common.axes import BY_OP, axes

from app.audit.service import record
from app.core.bounds import MAX_ID, RUNS_PAGE_MAX, SAMPLES_PAGE_MAX, Id
from app.core.deps import SessionDep
from app.core.etag import answer, matches, not_modified
from app.experiments.registry import EXPERIMENTS, PARAMS, RUNS, RunExperimentKind
from app.jobs import export, service
from app.jobs.doorbell import ring
from app.jobs.models import RunStatus
from app.jobs.schemas import (
    AxesPublic,
    DurationTerms,
    ExperimentPublic,
    ExperimentsPublic,
    IsoDatetime,
    JobCreate,
    JobEstimate,
    JobPublic,
    RunFilter,
    RunPublic,
    RunsPublic,
    SamplesPublic,
)
from app.users.auth import OperatorDep, ViewerDep

router = APIRouter(prefix="/api", tags=["jobs"])

@router.get("/experiments", response_model=ExperimentsPublic)
def read_experiments(_: ViewerDep) -> ExperimentsPublic:
    return ExperimentsPublic(data=[
        ExperimentPublic(kind=e.kind, title=e.title, description=e.description, unit_hint=e.unit,
                         units_by_op=dict(e.run.units_by_op), roles=[role for role, _ in e.roles],
                         run_kinds=[kind for _, kind in e.roles], applies=e.applies(),
                         duration=DurationTerms(**e.terms()), reference_tools=list(e.run.references),
                         needs_gpu=any(RUNS[kind].needs_gpu for _, kind in e.roles),
                         parameters=PARAMS[e.kind].model_json_schema(),
                         axes=AxesPublic(**axes(e.run.kernel).public()),
                         axes_by_op={op: AxesPublic(**a.public()) for op, a in BY_OP.get(e.run.kernel, {}).items()})
        for e in EXPERIMENTS.values()
    ])


@router.post("/jobs", response_model=JobPublic, status_code=201)
def create_job(body: Annotated[JobCreate, Body()], p: OperatorDep, session: SessionDep) -> JobPublic:
    job = service.create_job(session, body, created_by=p.name)
    record(session, p.name, "job.create", f"job {job.id}", experiment=body.experiment, host_ids=body.host_ids)
    session.commit()
    for host_id in body.host_ids:
        ring(host_id)
    return service.job_public(session, job)


@router.post("/jobs/estimate", response_model=JobEstimate)
def estimate_job(body: Annotated[JobCreate, Body()], _: ViewerDep, session: SessionDep) -> JobEstimate:
    """How long this job would usually take (its typical time on the slowest host picked) and its cap, apart:
    the new-job form's estimate. Nothing is created."""
    return service.estimate(session, body)


# an instance label to match: free text, but never a NUL (PostgreSQL's text cannot hold one; app/core/body.py refuses
# one anywhere in a URL, and this says so in the document)
Label = Annotated[str | None, Query(max_length=64, pattern=r"^[^\x00]*$")]


NOT_MODIFIED: dict[int | str, dict[str, Any]] = {
    304: {"description": "not modified: the If-None-Match tag is the answer's ETag"}}


@router.get("/runs", response_model=RunsPublic, responses=NOT_MODIFIED)
def read_runs(
    _: ViewerDep,
    session: SessionDep,
    request: Request,
    ids: Annotated[
        str | None, Query(pattern=r"^\d{1,12}(,\d{1,12}){0,49}$", description="comma-separated run ids")
    ] = None,
    job_id: Annotated[Id | None, Query(description="the runs of one job")] = None,
    host_id: Id | None = None,
    experiment: RunExperimentKind | None = None,
    status: RunStatus | None = None,
    provider: Label = None,
    instance_type: Label = None,
    region: Label = None,
    created_after: IsoDatetime | None = None,
    created_before: IsoDatetime | None = None,
    limit: Annotated[int, Query(ge=1, le=RUNS_PAGE_MAX)] = 50,
    before_id: Annotated[Id | None, Query(description="keyset paging: the runs older than this one (the previous "
                                                       "page's next_before_id); stable while runs are added")] = None,
    offset: Annotated[int, Query(ge=0, le=10**9, deprecated=True,
                                 description="deprecated: page with before_id (OFFSET reads every row it skips, and "
                                             "a page moves when runs are added)")] = 0,
    detail: Annotated[Literal["summary", "full"], Query(
        description="summary (the default): each run's stored headline and verdict, `result` null; full: the "
                    "stored result with every row (Compare, exports)")] = "summary",
) -> RunsPublic | Response:
    # an id beyond any table's range names no run: it matches nothing (and never reaches PostgreSQL)
    wanted = [int(i) for i in ids.split(",") if 1 <= int(i) <= MAX_ID] if ids else None
    f = RunFilter(ids=wanted, job_id=job_id, host_id=host_id,
                  experiment=experiment, status=status, provider=provider, instance_type=instance_type,
                  region=region, created_after=created_after, created_before=created_before)
    return answer(request, service.list_runs(session, f, limit, offset, before_id=before_id, full=detail == "full"))


@router.get("/runs/{run_id}/export", response_class=Response,
            responses={200: {"content": {"text/csv": {}, "application/json": {}}}})
def export_run(run_id: Id, _: ViewerDep, session: SessionDep,
               format: Annotated[str, Query(pattern="^(csv|json)$")] = "csv") -> Response:
    run = service.get_run(session, run_id)
    body, media = export.run_export(service.run_public(session, run), service.all_samples(session, run), format)
    name = f"hostbench-run-{run_id}.{format}"
    return Response(body, media_type=media, headers={"Content-Disposition": f'attachment; filename="{name}"'})


@router.get("/runs/{run_id}", response_model=RunPublic, responses=NOT_MODIFIED)
def read_run(run_id: Id, _: ViewerDep, session: SessionDep, request: Request) -> RunPublic | Response:
    """A run and its stored result. An ended run's tag comes from the facts its answer is made of, so an unchanged
    one is answered 304 before its result is read into the answer; a run still going is tagged by its answer."""
    run = service.get_run(session, run_id)
    etag = service.run_etag(session, run)
    if etag is not None and matches(request, etag):
        return not_modified(etag)
    return answer(request, service.run_public(session, run), etag)


@router.get("/runs/{run_id}/samples", response_model=SamplesPublic)
def read_samples(
    run_id: Id,
    _: ViewerDep,
    session: SessionDep,
    after_seq: Annotated[int, Query(ge=-1, le=10**12, description="keyset paging: the samples after this seq (the "
                                                                  "previous page's next_after_seq)")] = -1,
    limit: Annotated[int, Query(ge=1, le=SAMPLES_PAGE_MAX)] = SAMPLES_PAGE_MAX,
) -> SamplesPublic:
    data = service.samples_after(session, service.get_run(session, run_id), after_seq, limit)
    return SamplesPublic(data=data, count=len(data), next_after_seq=data[-1].seq if len(data) == limit else None)


@router.post("/runs/{run_id}/cancel", response_model=RunPublic, status_code=202)
def cancel_run(run_id: Id, p: OperatorDep, session: SessionDep) -> RunPublic:
    run = service.cancel_run(session, run_id, by=p.name)
    if run.cancelled_by == p.name:
        record(session, p.name, "run.cancel", f"run {run.id}")
        session.commit()
    ring(run.host_id)
    return service.run_public(session, run)
