from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.audit.models import AuditEvent


def record(session: Session, user_name: str, action: str, target: str, **detail: Any) -> None:
    """Added to the caller's transaction: the record commits with the change it describes, or not at all."""
    session.add(AuditEvent(user_name=user_name, action=action, target=target[:160], detail=detail))


def list_events(session: Session, limit: int, offset: int) -> tuple[list[AuditEvent], int]:
    count = session.scalar(select(func.count()).select_from(AuditEvent)) or 0
    rows = session.scalars(select(AuditEvent).order_by(AuditEvent.id.desc()).limit(limit).offset(offset))
    return list(rows), count
