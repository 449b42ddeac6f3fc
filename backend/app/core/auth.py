"""Who is calling, and may they? Every route declares its access through exactly one of the dependencies
here (`ViewerDep`, `OperatorDep`, `AdminDep`, `PUBLIC`, the runner's credential or a registration token);
`route_access` reads that declaration back, and the route table and its test are built from it
(docs/security.md)."""
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import Depends, Request
from fastapi.routing import APIRoute
from sqlalchemy.orm import Session

from app.core.config import get_settings
from app.core.db import get_session
from app.core.errors import Forbidden, Unauthorized
from app.core.security import same
from app.users import service as users
from app.users.models import User, UserSession

SESSION_COOKIE = "hb_session"
CSRF_COOKIE = "hb_csrf"
CSRF_HEADER = "x-csrf-token"
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
ACCESS_ATTR = "__hostbench_access__"


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


def _own_origins(request: Request) -> set[str]:
    host = request.headers.get("host", "").lower()
    own = {f"http://{host}", f"https://{host}", *get_settings().allowed_origins}
    public = get_settings().hostbench_public_url
    if public:
        u = urlsplit(public)
        own.add(f"{u.scheme}://{u.netloc}".lower())
    return own


def check_origin(request: Request) -> None:
    """Refuse a browser request made by another site's page (forms, fetch, EventSource)."""
    if request.headers.get("sec-fetch-site") == "cross-site":
        raise Forbidden("cross-site requests are refused")
    origin = request.headers.get("origin")
    if origin is not None and origin.rstrip("/").lower() not in _own_origins(request):
        raise Forbidden(f"origin {origin} may not call this server")


def _bearer(request: Request) -> str | None:
    auth = request.headers.get("authorization")
    if auth and auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    return None


def authenticate(request: Request, session: Session) -> Principal:
    token = _bearer(request)
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


def _marker(name: str) -> Callable[[], None]:
    def dep() -> None:
        return None

    dep.__name__ = f"access_{name}"
    setattr(dep, ACCESS_ATTR, name)
    return dep


# For routes open without a session: say so, so that forgetting to declare access is an error, not a default.
PUBLIC = Depends(_marker("public"))
# The runner register route: the body carries a single-use registration token.
REGISTRATION = Depends(_marker("registration-token"))
# Runner routes that authenticate in their own body (the long poll); the others use RunnerDep.
RUNNER = Depends(_marker("runner"))


def api_routes(routes: Any) -> Iterator[APIRoute]:
    """Every APIRoute, through included routers (FastAPI keeps those as wrappers around the original router;
    our routers carry their prefix themselves and are included without one, so the paths are whole)."""
    for r in routes:
        if isinstance(r, APIRoute):
            yield r
        elif hasattr(r, "original_router"):
            yield from api_routes(r.original_router.routes)


def route_access(route: APIRoute) -> str | None:
    """The access a route declared (public, runner, registration-token, viewer, operator, admin)."""
    found: list[str] = []

    def walk(dependant: Any) -> None:
        for d in dependant.dependencies:
            access = getattr(d.call, ACCESS_ATTR, None)
            if access:
                found.append(access)
            walk(d)

    walk(route.dependant)
    order = ["public", "registration-token", "runner", "viewer", "operator", "admin"]
    return max(found, key=order.index) if found else None
