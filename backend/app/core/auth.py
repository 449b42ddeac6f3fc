"""Who is calling, the part that knows no domain: the cookie and header names, the same-origin check, and the
access markers of routes open without a person's session. The roles (`ViewerDep`, `OperatorDep`, `AdminDep`),
which look the person up, are app.users.auth; the runner's credential is app.runner_api.router's. Every route
declares its access through exactly one of these; app.core.routes reads that declaration back (docs/security.md)."""
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import urlsplit

from fastapi import Depends, Request

from app.core.config import get_settings
from app.core.errors import Forbidden
from app.core.routes import ACCESS_ATTR

SESSION_COOKIE = "hb_session"
CSRF_COOKIE = "hb_csrf"
CSRF_HEADER = "x-csrf-token"
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})


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


def bearer(request: Request) -> str | None:
    auth = request.headers.get("authorization")
    if auth and auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    return None


def _marker(name: str) -> Callable[[], Coroutine[Any, Any, None]]:
    async def dep() -> None:  # async: FastAPI would run a plain function in a worker thread, a hop for nothing
        return None

    dep.__name__ = f"access_{name}"
    setattr(dep, ACCESS_ATTR, name)
    return dep


# For routes open without a session: say so, so that forgetting to declare access is an error, not a default.
PUBLIC = Depends(_marker("public"))
# The runner register route: the body carries a single-use registration token.
REGISTRATION = Depends(_marker("registration-token"))
# Runner routes that authenticate in their own body (the long poll); the others use app.runner_api's RunnerDep.
RUNNER = Depends(_marker("runner"))
