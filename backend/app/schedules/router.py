"""Schedules: a suite started again and again by Celery beat (app.schedules.service). Who may call each route:
docs/security.md."""
from typing import Annotated

from fastapi import APIRouter, Query, Response
from pydantic import ValidationError

from app.audit.service import record
from app.core.bounds import Id
from app.core.db import utcnow
from app.core.deps import SessionDep
from app.core.errors import FieldInvalid
from app.schedules import service
from app.schedules.schemas import (
    MAX_INTERVAL_S,
    MIN_INTERVAL_S,
    FiringPublic,
    FiringsPublic,
    PreviewPublic,
    Recurrence,
    ScheduleIn,
    SchedulePublic,
    SchedulesPublic,
)
from app.users.auth import OperatorDep, ViewerDep

router = APIRouter(prefix="/api", tags=["schedules"])

ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}


@router.get("/schedules", response_model=SchedulesPublic)
def read_schedules(_: ViewerDep, session: SessionDep) -> SchedulesPublic:
    """Every schedule, with its next three fire times and its latest firing."""
    return SchedulesPublic(data=service.listing(session))


@router.get("/schedules/preview", response_model=PreviewPublic)
def preview(_: ViewerDep,
            interval_s: Annotated[int | None, Query(ge=MIN_INTERVAL_S, le=MAX_INTERVAL_S)] = None,
            cron: Annotated[str | None, Query(min_length=1, max_length=100)] = None) -> PreviewPublic:
    """The next three times a recurrence (interval_s, or a 5-field cron expression in UTC) would fire from now."""
    try:
        r = Recurrence(interval_s=interval_s, cron=cron)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ("query", *first["loc"]) if first["loc"] else ("query",)
        raise FieldInvalid(loc, str(first["msg"]).removeprefix("Value error, ")) from None
    return PreviewPublic(next=service.upcoming(r.interval_s, r.cron, utcnow()))


@router.post("/schedules", response_model=SchedulePublic, status_code=201,
             responses={409: {"description": "too many schedules already", "content": ERROR}})
def create_schedule(body: ScheduleIn, p: OperatorDep, session: SessionDep) -> SchedulePublic:
    s = service.create(session, body, p.name)
    record(session, p.name, "schedule.create", f"schedule {s.id}", **body.model_dump(mode="json"))
    session.commit()
    return service.public(session, s)


@router.get("/schedules/{schedule_id:int}", response_model=SchedulePublic)
def read_schedule(schedule_id: Id, _: ViewerDep, session: SessionDep) -> SchedulePublic:
    return service.public(session, service.get(session, schedule_id))


@router.put("/schedules/{schedule_id:int}", response_model=SchedulePublic)
def update_schedule(schedule_id: Id, body: ScheduleIn, p: OperatorDep, session: SessionDep) -> SchedulePublic:
    """Change a schedule: its owner, or an admin. A new recurrence, or enabling it again, counts from now."""
    s = service.editable(session, schedule_id, p.name, p.role == "admin")
    service.update(session, s, body)
    record(session, p.name, "schedule.update", f"schedule {schedule_id}", **body.model_dump(mode="json"))
    session.commit()
    return service.public(session, s)


@router.delete("/schedules/{schedule_id:int}", status_code=204)
def delete_schedule(schedule_id: Id, p: OperatorDep, session: SessionDep) -> Response:
    """Delete a schedule and its history: its owner, or an admin. The suite runs it started stay."""
    s = service.editable(session, schedule_id, p.name, p.role == "admin")
    session.delete(s)
    record(session, p.name, "schedule.delete", f"schedule {schedule_id}")
    session.commit()
    return Response(status_code=204)


@router.post("/schedules/{schedule_id:int}/run-now", response_model=FiringPublic, status_code=201)
def run_schedule_now(schedule_id: Id, p: OperatorDep, session: SessionDep) -> FiringPublic:
    """Fire it once now, as beat would (busy or offline hosts left out); its next time stays. The firing is the
    answer, `failed` with the reason when the suite run was refused."""
    f = service.run_now(session, schedule_id)
    record(session, p.name, "schedule.run_now", f"schedule {schedule_id}", outcome=f.outcome,
           suite_run_id=f.suite_run_id)
    session.commit()
    return service.firing_public(f)


@router.get("/schedules/{schedule_id:int}/history", response_model=FiringsPublic)
def read_history(schedule_id: Id, _: ViewerDep, session: SessionDep,
                 limit: Annotated[int, Query(ge=1, le=100)] = 20,
                 offset: Annotated[int, Query(ge=0, le=10**6)] = 0) -> FiringsPublic:
    """Its firings, newest first: started (the suite run), skipped or failed, with the reasons."""
    data, count = service.history(session, schedule_id, limit, offset)
    return FiringsPublic(data=data, count=count)
