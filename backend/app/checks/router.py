"""Health checks: start one on hosts or a label (operators and admins), read it, its report and the fleet's latest
verdicts (any signed-in person). docs/security.md."""
import re
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from app.audit.service import record
from app.checks import report, service
from app.checks.schemas import CheckCreate, CheckPublic, ChecksPublic, FleetHealth
from app.core.bounds import Id
from app.core.deps import SessionDep
from app.core.errors import Forbidden
from app.core.headers import FRAME_ANCESTORS
from app.hosts.router import public_base_url
from app.jobs.doorbell import ring
from app.users.auth import OperatorDep, ViewerDep

router = APIRouter(prefix="/api", tags=["checks"])


@router.post("/checks", response_model=CheckPublic, status_code=201)
def start_check(body: CheckCreate, p: OperatorDep, session: SessionDep) -> CheckPublic:
    """Start a health check: the suite on every host picked (or labelled), one suite run; each host is judged when
    its runs have ended. Draining a FAILed host's Slurm node (drain_on_fail) is for admins."""
    if body.drain_on_fail and p.role != "admin":
        raise Forbidden("drain_on_fail: draining Slurm nodes is for admins")
    check = service.start(session, body, p.name)
    record(session, p.name, "check.start", f"health check {check.id}", suite=body.suite, host_ids=check.host_ids,
           label=body.label, drain_on_fail=body.drain_on_fail)
    session.commit()
    for host_id in check.host_ids:
        ring(host_id)
    return service.public(session, check)


@router.get("/checks", response_model=ChecksPublic)
def read_checks(_: ViewerDep, session: SessionDep,
                limit: Annotated[int, Query(ge=1, le=100)] = 20) -> ChecksPublic:
    return ChecksPublic(data=[service.public(session, c) for c in service.recent(session, limit)])


@router.get("/checks/fleet", response_model=FleetHealth)
def read_fleet_health(_: ViewerDep, session: SessionDep) -> FleetHealth:
    """Each host's latest verdict (of each check it had), with its age."""
    return service.fleet(session)


@router.get("/checks/{check_id:int}", response_model=CheckPublic)
def read_check(check_id: Id, _: ViewerDep, session: SessionDep) -> CheckPublic:
    """A check: each host's verdict, failures first with their evidence (judged here too once its runs ended)."""
    return service.public(session, service.get(session, check_id))


@router.get("/checks/{check_id:int}/report", response_class=Response,
            responses={200: {"content": {"text/html": {}}}})
def download_check_report(check_id: Id, _: ViewerDep, session: SessionDep, request: Request) -> Response:
    """The check's report as one self-contained HTML file."""
    check = service.public(session, service.get(session, check_id))
    name = "hostbench-check-" + re.sub(r"[^A-Za-z0-9._-]+", "-", f"{check.id}-{check.suite}") + ".html"
    return Response(report.render(check, public_base_url(request)), media_type="text/html; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"',
                             "Content-Security-Policy": f"{report.csp()}; {FRAME_ANCESTORS}"})
