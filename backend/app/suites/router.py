from typing import Annotated

from fastapi import APIRouter, Query, Response
from hostbench_common.suites import BUILTIN

from app.audit.service import record
from app.core.bounds import Id
from app.core.deps import SessionDep
from app.jobs.doorbell import ring
from app.suites import service
from app.suites.schemas import (
    SavedSuiteIn,
    SuiteEstimate,
    SuiteId,
    SuitePublic,
    SuiteRunCreate,
    SuiteRunPublic,
    SuiteRunsPublic,
    SuitesPublic,
)
from app.users.auth import OperatorDep, ViewerDep

router = APIRouter(prefix="/api", tags=["suites"])


@router.get("/suites", response_model=SuitesPublic)
def read_suites(_: ViewerDep, session: SessionDep) -> SuitesPublic:
    """The built-in suites (hostbench_common.suites) and the saved ones: items in the experiment table's terms, and
    how long one takes on one host."""
    return SuitesPublic(data=service.all_suites(session))


@router.post("/suites", response_model=SuitePublic, status_code=201)
def save_suite(body: SavedSuiteIn, p: OperatorDep, session: SessionDep) -> SuitePublic:
    """Save a suite of one's own (also: import one exported from GET /api/suites/{id}); every item is checked as a
    job body now, not when it runs."""
    row = service.save(session, body, p.name)
    record(session, p.name, "suite.save", f"suite saved-{row.id}", title=row.title)
    session.commit()
    return service.public_of(row)


@router.get("/suites/{suite_id}", response_model=SuitePublic)
def read_suite(suite_id: SuiteId, _: ViewerDep, session: SessionDep) -> SuitePublic:
    """One suite, built in or saved; this JSON is the export format (POST it to /api/suites to import)."""
    row = service.saved_row(session, suite_id) if suite_id not in BUILTIN else None
    return service.public_of(row) if row is not None else service.suite_public(service.get_suite(suite_id))


@router.put("/suites/{suite_id}", response_model=SuitePublic)
def update_suite(suite_id: SuiteId, body: SavedSuiteIn, p: OperatorDep, session: SessionDep) -> SuitePublic:
    """Change a saved suite: its owner, or an admin (409 for a built-in one)."""
    row = service.editable(session, suite_id, p.name, p.role == "admin")
    service.update(session, row, body)
    record(session, p.name, "suite.update", f"suite {suite_id}")
    session.commit()
    return service.public_of(row)


@router.delete("/suites/{suite_id}", status_code=204)
def delete_suite(suite_id: SuiteId, p: OperatorDep, session: SessionDep) -> Response:
    """Delete a saved suite: its owner, or an admin. Its suite runs stay (they carry its title)."""
    row = service.editable(session, suite_id, p.name, p.role == "admin")
    session.delete(row)
    record(session, p.name, "suite.delete", f"suite {suite_id}")
    session.commit()
    return Response(status_code=204)


@router.post("/suite-runs", response_model=SuiteRunPublic, status_code=201)
def start_suite(body: SuiteRunCreate, p: OperatorDep, session: SessionDep) -> SuiteRunPublic:
    """Start a suite on hosts: every job it plans there, created at once (or none, with the reason), one unit."""
    sr = service.start(session, body.suite, body.host_ids, p.name, body.peer_host_id)
    record(session, p.name, "suite.start", f"suite run {sr.id}", suite=body.suite, host_ids=body.host_ids)
    session.commit()
    for host_id in body.host_ids:
        ring(host_id)
    return service.public(session, sr)


@router.post("/suite-runs/estimate", response_model=SuiteEstimate)
def estimate_suite(body: SuiteRunCreate, _: ViewerDep, session: SessionDep) -> SuiteEstimate:
    """How long this suite would usually take on these hosts, and its cap, apart (the suite form's estimate). Nothing
    is started."""
    return service.estimate(session, body.suite, body.host_ids, body.peer_host_id)


@router.get("/suite-runs", response_model=SuiteRunsPublic)
def read_suite_runs(_: ViewerDep, session: SessionDep,
                    limit: Annotated[int, Query(ge=1, le=100)] = 20) -> SuiteRunsPublic:
    return SuiteRunsPublic(data=[service.public(session, sr) for sr in service.recent(session, limit)])


@router.get("/suite-runs/{suite_run_id:int}", response_model=SuiteRunPublic)
def read_suite_run(suite_run_id: Id, _: ViewerDep, session: SessionDep) -> SuiteRunPublic:
    return service.public(session, service.get(session, suite_run_id))


@router.post("/suite-runs/{suite_run_id:int}/cancel", response_model=SuiteRunPublic, status_code=202)
def cancel_suite_run(suite_run_id: Id, p: OperatorDep, session: SessionDep) -> SuiteRunPublic:
    """Cancel every run of the suite still queued or running."""
    sr = service.get(session, suite_run_id)
    hosts = service.cancel(session, sr, p.name)
    record(session, p.name, "suite.cancel", f"suite run {sr.id}")
    session.commit()
    for host_id in hosts:
        ring(host_id)
    return service.public(session, sr)
