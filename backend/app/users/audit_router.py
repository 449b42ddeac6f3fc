"""Reading the audit log (app.audit). The log sits below every domain, which all write to it (audit.service.record);
reading it needs a signed-in viewer, which is this package's, so its route lives here."""
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel

from app.audit import service
from app.core.deps import SessionDep
from app.users.auth import ViewerDep

router = APIRouter(prefix="/api", tags=["audit"])


class AuditEventPublic(BaseModel):
    id: int
    at: datetime
    user_name: str
    action: str
    target: str
    detail: dict[str, Any]


class AuditPublic(BaseModel):
    data: list[AuditEventPublic]
    count: int


@router.get("/audit", response_model=AuditPublic)
def read_audit(
    _: ViewerDep, session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
) -> AuditPublic:
    rows, count = service.list_events(session, limit, offset)
    return AuditPublic(data=[AuditEventPublic.model_validate(r, from_attributes=True) for r in rows], count=count)
