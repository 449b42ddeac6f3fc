"""One error hierarchy, mapped once to {"detail": ...} responses."""
import math
from typing import Any

import psycopg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import InterfaceError as SAInterfaceError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from app.core.routes import api_routes


class HostbenchError(Exception):
    status_code = 400

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class BadRequest(HostbenchError):
    status_code = 400


class Unauthorized(HostbenchError):
    status_code = 401


class Forbidden(HostbenchError):
    status_code = 403


class NotFound(HostbenchError):
    status_code = 404


class Conflict(HostbenchError):
    status_code = 409


class Unprocessable(HostbenchError):
    status_code = 422


class FieldInvalid(HostbenchError):
    """A 422 in the shape request validation uses ({"detail": [{"type", "loc", "msg"}]}), for checks that need the
    database or span several fields: `loc` names the field, e.g. ("body", "params", "duration_s")."""

    status_code = 422

    def __init__(self, loc: tuple[str | int, ...], msg: str, type_: str = "value_error"):
        super().__init__(msg)
        self.loc = loc
        self.type = type_


class TooMany(HostbenchError):
    status_code = 429

    def __init__(self, detail: str, retry_after_s: int | None = None):
        super().__init__(detail)
        self.retry_after_s = retry_after_s


DB_RETRY_AFTER_S = 5  # what a client is told to wait when PostgreSQL cannot be reached


class Unavailable(HostbenchError):
    """503. `what` (e.g. "database") goes out as X-Hostbench-Unavailable, with Retry-After, so a client can tell
    a part that is away for a while from a bug."""

    status_code = 503

    def __init__(self, detail: str, what: str | None = None, retry_after_s: int = DB_RETRY_AFTER_S):
        super().__init__(detail)
        self.what = what
        self.retry_after_s = retry_after_s


# A 422 names what was wrong; it repeats an input only when that is a short scalar, never a large or nested one
# (a 200 MB body used to come back whole inside its 422), and never a value JSON cannot carry (NaN).
ECHO_MAX_CHARS = 100
MAX_ERRORS = 50


def _small(value: Any) -> bool:
    if value is None or isinstance(value, bool | int):
        return not isinstance(value, int) or abs(value) < 10**30
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str) and len(value) <= ECHO_MAX_CHARS


def validation_detail(errors: Any) -> list[dict[str, Any]]:
    out = []
    for e in list(errors)[:MAX_ERRORS]:
        item: dict[str, Any] = {"type": str(e.get("type", "")), "loc": [x if isinstance(x, int) else str(x)[:100]
                                                                        for x in e.get("loc", ())][:20],
                                "msg": str(e.get("msg", ""))[:500]}
        if "input" in e and _small(e["input"]):
            item["input"] = e["input"]
        ctx = {k: v for k, v in (e.get("ctx") or {}).items() if _small(v)}
        if ctx:
            item["ctx"] = ctx
        out.append(item)
    return out


def allowed_methods(request: Request) -> list[str]:
    """Every method of the documented path this request's path belongs to (Starlette's own 405 names only the
    methods of the first route that matched). Where a literal segment and a parameter both match
    (/api/hosts/registration-tokens and /api/hosts/{host_id}), the literal one is the path meant."""
    found: dict[int, set[str]] = {}
    for route in api_routes(request.app.router.routes):
        if not route.include_in_schema or not route.methods:
            continue
        match, _ = route.matches({**request.scope, "method": "\x00"})
        if match != Match.NONE:
            found.setdefault(route.path.count("{"), set()).update(route.methods)
    return sorted(found[min(found)]) if found else []


def _database_unavailable() -> JSONResponse:
    return JSONResponse({"detail": "the database is unavailable; retry shortly"}, status_code=503,
                        headers={"Retry-After": str(DB_RETRY_AFTER_S), "X-Hostbench-Unavailable": "database"})


async def _access_without_body(request: Request) -> None:
    """Run the matched route's dependencies (who may call it) without its body; raises what they raise."""
    from contextlib import AsyncExitStack
    from copy import copy

    from fastapi.dependencies.utils import solve_dependencies
    from fastapi.routing import APIRoute

    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    dependant = copy(route.dependant)
    dependant.body_params = []
    async with AsyncExitStack() as stack:
        await solve_dependencies(request=request, dependant=dependant, async_exit_stack=stack,
                                 embed_body_fields=False)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            allow = allowed_methods(request)
            if allow:
                headers["Allow"] = ", ".join(allow)
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=headers or None)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        if any(e.get("type") == "json_invalid" for e in exc.errors()):
            # FastAPI parses a JSON body before it runs the route's dependencies: a caller who may not call the
            # route got 422 for a malformed body where the route table says 401 (issue 27, item 12). Its access
            # is checked first: the route's dependencies, without the body.
            try:
                await _access_without_body(request)
            except HostbenchError as denied:
                return await _handle(request, denied)
            except StarletteHTTPException as denied:
                return await _http(request, denied)
        return JSONResponse({"detail": validation_detail(exc.errors())}, status_code=422)

    @app.exception_handler(DBAPIError)
    async def _database(_: Request, exc: DBAPIError) -> JSONResponse:
        """PostgreSQL unreachable, restarting or gone mid-request: 503 with Retry-After, never a 500. The pool
        has already thrown the dead connection away (and, on a disconnect, every connection older than it), so
        the retry gets a fresh one. Any other database error is a bug and stays a 500."""
        if exc.connection_invalidated or isinstance(exc, OperationalError | SAInterfaceError):
            return _database_unavailable()
        raise exc

    @app.exception_handler(psycopg.OperationalError)
    @app.exception_handler(psycopg.InterfaceError)
    async def _database_async(_: Request, exc: psycopg.Error) -> JSONResponse:
        """The same from the runners' statements on the event loop (app.runner_api.fast: psycopg's own errors;
        its pool throws a broken connection away and checks the idle ones)."""
        return _database_unavailable()

    @app.exception_handler(HostbenchError)
    async def _handle(_: Request, exc: HostbenchError) -> JSONResponse:
        if isinstance(exc, FieldInvalid):
            return JSONResponse({"detail": [{"type": exc.type, "loc": list(exc.loc), "msg": exc.detail}]},
                                status_code=422)
        headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, Unauthorized) else None
        if isinstance(exc, TooMany) and exc.retry_after_s is not None:
            headers = {"Retry-After": str(max(1, exc.retry_after_s))}
        if isinstance(exc, Unavailable):
            headers = {"Retry-After": str(max(1, exc.retry_after_s))}
            if exc.what:
                headers["X-Hostbench-Unavailable"] = exc.what
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=headers)
