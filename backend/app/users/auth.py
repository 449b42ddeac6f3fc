"""Who is calling, and may they: the people's side of app.core.auth. A person's role is declared on a route through
exactly one of `ViewerDep`, `OperatorDep`, `AdminDep`; app.core.routes reads it back (docs/security.md)."""
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from app.core.auth import CSRF_HEADER, SESSION_COOKIE, UNSAFE, bearer, check_origin
from app.core.db import get_session
from app.core.errors import Forbidden, Unauthorized
from app.core.routes import ACCESS_ATTR
from app.core.security import same
from app.users import service as users
from app.users.models import User, UserSession


@dataclass
class Principal:
    user: User
    session: UserSession | None  # None when the call came with a personal API token

    @property
    def name(self) -> str:
        return self.user.name

    @property
    def role(self) -> str:
        return self.user.role


def authenticate(request: Request, session: Session) -> Principal:
    token = bearer(request)
    if token is not None:
        if not token.startswith("hbpat_"):
            raise Unauthorized("this route takes a personal API token (hbpat_…) or a signed-in session")
        user = users.api_token_user(session, token)
        if user is None:
            raise Unauthorized("API token unknown, expired or revoked")
        return Principal(user, None)
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        found = users.session_user(session, cookie)
        if found is not None:
            user, us = found
            if request.method in UNSAFE:
                sent = request.headers.get(CSRF_HEADER, "")
                if not sent or not same(sent, us.csrf_token):
                    raise Forbidden(f"missing or wrong {CSRF_HEADER} header (CSRF protection); reload the page")
            return Principal(user, us)
    raise Unauthorized("sign in first")


def _require(role: str) -> Callable[..., Principal]:
    def dep(request: Request, session: Annotated[Session, Depends(get_session)]) -> Principal:
        if request.method in UNSAFE or request.url.path.endswith("/events"):
            check_origin(request)
        p = authenticate(request, session)
        # End the read transaction the look-up opened (objects stay loaded: expire_on_commit=False). Left open,
        # a live stream held it "idle in transaction" for its whole life: a pooled connection per stream, and
        # locks that made a TRUNCATE (and would make a migration) wait behind every open stream.
        session.commit()
        if not users.role_at_least(p.role, role):
            raise Forbidden(f"this needs the {role} role; {p.name} is {p.role}")
        return p

    dep.__name__ = f"require_{role}"
    setattr(dep, ACCESS_ATTR, role)
    return dep


require_viewer = _require("viewer")
require_operator = _require("operator")
require_admin = _require("admin")
ViewerDep = Annotated[Principal, Depends(require_viewer)]
OperatorDep = Annotated[Principal, Depends(require_operator)]
AdminDep = Annotated[Principal, Depends(require_admin)]
