"""The route table: every API route and the access it declared. Each route declares its access through exactly one
dependency that carries ACCESS_ATTR (app.core.auth's markers, app.users.auth's roles, the runner's credential in
app.runner_api.router); `route_access` reads it back, and the route table, the OpenAPI document's
x-hostbench-access and their tests are built from it (docs/security.md). Imports nothing of the app, so the error
handlers (app.core.errors) can use it too."""
from collections.abc import Iterator
from typing import Any

from fastapi.routing import APIRoute

ACCESS_ATTR = "__hostbench_access__"
ACCESS_ORDER = ("public", "registration-token", "runner", "viewer", "operator", "admin")


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
    return max(found, key=ACCESS_ORDER.index) if found else None
