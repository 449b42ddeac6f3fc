from typing import Annotated

from fastapi import Depends, Header
from sqlalchemy.orm import Session

from app.core.db import get_session
from app.hosts.models import Host
from app.hosts.service import authenticate_runner

SessionDep = Annotated[Session, Depends(get_session)]


def current_runner(session: SessionDep, authorization: Annotated[str | None, Header()] = None) -> Host:
    token = None
    if authorization and authorization.lower().startswith("bearer "):
        token = authorization[7:].strip()
    return authenticate_runner(session, token)


RunnerDep = Annotated[Host, Depends(current_runner)]
