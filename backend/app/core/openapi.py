"""The error answers in the OpenAPI document: every operation lists the 4xx/5xx statuses it can give, each with the
one error body this API uses ({"detail": "words"} or, for 422, {"detail": [{"type", "loc", "msg"}]}). The
schemathesis suite (backend/tests/test_api_fuzz.py) fails on any answer the document does not describe."""
import re
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from app.core.routes import api_routes, route_access

ERROR = {"$ref": "#/components/schemas/Error"}

# Which statuses come from where (app.core.errors, app.core.auth, app.users.auth, app.core.body, app.core.hostcheck):
DESCRIPTIONS = {
    "400": "Host header not allowed, or a body that could not be read",
    "401": "no credential, or one unknown, expired or revoked (WWW-Authenticate: Bearer)",
    "403": "below the route's role, a cross-site origin, or a missing CSRF token",
    "404": "no such object",
    "409": "conflicts with the object's current state",
    "413": "request body over the limit (checked before it is read)",
    "422": "invalid input: which field and why",
    "429": "over a limit; Retry-After says when to try again",
    "503": "a service this needs (PostgreSQL) is unavailable; retry later",
}
# Statuses particular to some operations: (method regex, path regex) -> statuses.
PARTICULAR: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("POST", r"^/api/jobs$", ("429",)),
    ("GET", r"^/api/runs/\{run_id\}/events$", ("429",)),
    ("POST", r"^/api/auth/(login|link)$", ("401", "429")),
    ("PUT", r"^/api/auth/password$", ("401",)),
    ("POST|PATCH|DELETE", r"^/api/users(/\{user_id\})?$", ("409",)),
    ("POST", r"^/api/runner/runs/", ("409",)),
    ("POST", r"^/api/runners/register$", ("401", "409")),
    ("POST", r"^/api/hosts/\{host_id\}/rotate-credential$", ("409",)),
    ("GET", r"^/api/install/", ("503",)),
    ("GET", r"^/api/report(/html)?$", ("404",)),  # a run, job or suite run named that does not exist
    ("POST", r"^/api/suite-runs$", ("404", "429")),  # an unknown suite; the active-run caps
    ("POST", r"^/api/(suite-runs|jobs)/estimate$", ("404",)),  # an unknown suite or host
    ("PUT|DELETE", r"^/api/suites/\{suite_id\}$", ("409",)),  # a built-in suite is not changed
    ("POST", r"^/api/reference/imports$", ("404",)),  # an unknown host
    ("POST", r"^/api/bands/remove$", ("404",)),  # no such band
    ("GET", r"^/api/bands/learned$", ("404",)),  # no such host
    ("POST", r"^/api/checks$", ("404", "429")),  # an unknown suite or host; the active-run caps
)
RETRY_AFTER = {"Retry-After": {"description": "seconds to wait", "required": True,
                               "schema": {"type": "integer", "minimum": 1}}}


def document_errors(schema: dict[str, Any]) -> None:
    comps = schema.setdefault("components", {}).setdefault("schemas", {})
    detail = {"anyOf": [{"type": "string"},
                        {"type": "array", "items": {"$ref": "#/components/schemas/ValidationError"}}],
              "title": "Detail"}
    comps["Error"] = {"type": "object", "title": "Error", "required": ["detail"], "properties": {"detail": detail}}
    if "HTTPValidationError" in comps:  # 422s from checks that need the database carry a sentence, not a list
        comps["HTTPValidationError"]["properties"]["detail"] = detail
        comps["HTTPValidationError"]["required"] = ["detail"]
    for path, ops in schema.get("paths", {}).items():
        for method, op in ops.items():
            if not isinstance(op, dict) or "responses" not in op:
                continue
            access = op.get("x-hostbench-access")
            codes = {"400"}
            if access in ("viewer", "operator", "admin"):
                codes |= {"401", "403"}
            elif access in ("runner", "registration-token"):
                codes.add("401")
            if "{" in path:
                codes.add("404")
            if op.get("parameters") or op.get("requestBody"):
                codes.add("422")
            if op.get("requestBody") or method.upper() in ("POST", "PUT", "PATCH", "DELETE"):
                codes |= {"413", "422"}  # a body may come with any of these, and is read (and bounded) first
            for methods, pattern, extra in PARTICULAR:
                if re.fullmatch(methods, method.upper()) and re.match(pattern, path):
                    codes |= set(extra)
            for code in sorted(codes):
                resp = op["responses"].setdefault(code, {"description": DESCRIPTIONS[code]})
                resp.setdefault("content", {"application/json": {"schema": ERROR}})
                if code == "429" and path in ("/api/jobs", "/api/suite-runs"):
                    resp["headers"] = {**RETRY_AFTER}


def document_access(app: FastAPI) -> None:
    """Each operation in the OpenAPI document says who may call it (x-hostbench-access)."""
    def openapi() -> dict:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(title=app.title, version=app.version, routes=app.routes)
        for route in api_routes(app.routes):
            if route.include_in_schema:
                for method in route.methods or ():
                    op = schema["paths"].get(route.path_format, {}).get(method.lower())
                    if op is not None:
                        op["x-hostbench-access"] = route_access(route)
        document_errors(schema)  # every operation's 4xx/5xx answers
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
