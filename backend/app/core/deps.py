from typing import Annotated

from fastapi import Depends, Header, Request
from sqlalchemy.orm import Session

from app.core.db import get_session
from app.hosts.models import Host
from app.hosts.service import authenticate_runner, note_address

SessionDep = Annotated[Session, Depends(get_session)]


def current_runner(request: Request, session: SessionDep,
                   authorization: Annotated[str | None, Header()] = None) -> Host:
    token = None
    if authorization and authorization.lower().startswith("bearer "):
        token = authorization[7:].strip()
    host = authenticate_runner(session, token)
    note_address(session, host, request.client.host if request.client else None)
    return host


current_runner.__hostbench_access__ = "runner"  # type: ignore[attr-defined]  # read by app.core.auth.route_access
RunnerDep = Annotated[Host, Depends(current_runner)]
