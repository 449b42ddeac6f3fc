import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio.to_thread
from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from fastapi.telemetry import TelemetryConfig

from app.core.admission import LAG, Admission
from app.core.auth import PUBLIC
from app.core.body import BodyLimits
from app.core.config import get_settings
from app.core.db import get_sessionmaker
from app.core.dbwatch import DB_WATCH
from app.core.errors import NotFound, install_error_handlers
from app.core.headers import FRAME_ANCESTORS, SecurityHeaders
from app.core.hostcheck import AllowedHosts
from app.core.openapi import document_errors
from app.core.routes import api_routes, route_access
from app.health import Health, health
from app.hosts.router import router as hosts_router
from app.jobs import refusals
from app.jobs.dispatch import mark, reconcile_exclusive
from app.jobs.retire_router import router as retire_router
from app.jobs.router import router as jobs_router
from app.live.router import router as live_router
from app.reference.router import router as reference_router
from app.reports.router import router as reports_router
from app.runner_api import fast
from app.runner_api.gate import RunnerCredentials
from app.runner_api.router import router as runner_router
from app.schedules.router import router as schedules_router
from app.suites.router import router as suites_router
from app.trends.router import router as trends_router
from app.users.audit_router import router as audit_router
from app.users.router import router as users_router


def _mark_api() -> None:
    with get_sessionmaker()() as session:
        mark(session, "api")
        refusals.flush(session)  # the runners' calls this process could not take (kept when Redis is away)


async def _reconcile_loop() -> None:
    """The reconciler from inside the API (dispatch.reconcile_exclusive), every reconcile_s: leases are expired
    and lost doorbells re-rung even while Celery beat is down. Each period also marks "api" (an API process is
    up: while none is, no lease is expired, dispatch.renew_after_gap). A failed pass (the database away) is
    logged once per outage and retried at the next period."""
    log = logging.getLogger("hostbench.reconcile")
    failing = False
    while True:
        try:
            await anyio.to_thread.run_sync(_mark_api)
            await anyio.to_thread.run_sync(reconcile_exclusive)
            if failing:
                log.info("reconciler pass succeeded again")
            failing = False
        except Exception as exc:  # noqa: BLE001 - the loop must outlive any one pass
            if not failing:
                log.warning("reconciler pass failed (retrying every %.0f s): %s: %s", get_settings().reconcile_s,
                            type(exc).__name__, str(exc)[:200])
            failing = True
        await asyncio.sleep(get_settings().reconcile_s)


@asynccontextmanager
async def _lifespan(_: FastAPI) -> AsyncIterator[None]:
    tasks = [LAG.start()]  # how late the event loop runs: the dashboard is shed when it is out of CPU
    DB_WATCH.start()  # is PostgreSQL answering (a hung one is refused at once: app.core.admission)
    if get_settings().api_reconcile:
        tasks.append(asyncio.create_task(_reconcile_loop()))
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        await fast.close()  # the runners' async connections (app.runner_api.fast)


NO_TELEMETRY: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False, "operation_spans": False}


def create_app() -> FastAPI:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # /docs and /redoc are served below from the dashboard's build (no CDN: they work without internet)
    # FastAPI's built-in OpenTelemetry hooks off: nothing here exports spans, and asking for the global providers
    # on every request and around every dependency cost the dashboard's event loop 5 % of its time under load
    # (py-spy, ./hostbench load, issue 11)
    app = FastAPI(title="hostbench", version=get_settings().hostbench_version, docs_url=None, redoc_url=None,
                  lifespan=_lifespan, telemetry=NO_TELEMETRY)
    install_error_handlers(app)
    # Outermost last. A body is read (deadline, minimum rate, per-address bound) before its request takes an
    # admission slot, and a runner's credential is checked before its body is read (issue 27)
    app.add_middleware(Admission)  # requests wait in the event loop for a slot of their class (app.core.admission)
    app.add_middleware(BodyLimits)  # size limits, finite numbers, slow bodies cut off (app.core.body)
    app.add_middleware(RunnerCredentials)  # /api/runner/: 401 before the body (app.runner_api.gate)
    app.add_middleware(AllowedHosts)
    app.add_middleware(SecurityHeaders)  # outermost: every answer, a 400, 429 or 503 included (app.core.headers)
    app.add_api_route("/api/health", health, methods=["GET"], response_model=Health, tags=["health"],
                      dependencies=[PUBLIC])
    # app.jobs.retire_router holds two of the hosts' routes (revoking and deleting a host end its runs)
    routers = [users_router, hosts_router, retire_router, jobs_router, live_router, runner_router, reference_router,
               audit_router, trends_router, suites_router, reports_router, schedules_router]
    try:
        from app.install.router import router as install_router

        routers.append(install_router)
    except ImportError:  # pragma: no cover - until the installer lands
        pass
    for r in routers:
        app.include_router(r)
    _api_docs(app)
    _mount_frontend(app)
    _document_access(app)
    return app


# Swagger UI's and ReDoc's scripts, copied from npm (swagger-ui-dist, redoc) into the dashboard's build by
# frontend/vite.config.ts: served by this server, so the API pages load without internet.
API_DOCS_ASSETS = "/api-docs"


def _api_docs(app: FastAPI) -> None:
    from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
    from fastapi.responses import HTMLResponse

    icon = "data:,"  # no favicon request to a CDN
    # Nothing from another origin, even what the bundles would fetch by themselves (ReDoc's footer logo)
    csp = ("default-src 'self'; script-src 'self' 'unsafe-inline' blob:; style-src 'self' 'unsafe-inline'; "
           "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; "
           + FRAME_ANCESTORS)

    def own_origin(page: HTMLResponse) -> HTMLResponse:
        page.headers["Content-Security-Policy"] = csp
        return page

    @app.get("/docs", include_in_schema=False)
    def swagger() -> HTMLResponse:
        return own_origin(get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json", title=f"{app.title} API",
            swagger_js_url=f"{API_DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{API_DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=icon))

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return own_origin(get_redoc_html(
            openapi_url=app.openapi_url or "/openapi.json", title=f"{app.title} API",
            redoc_js_url=f"{API_DOCS_ASSETS}/redoc.standalone.js", redoc_favicon_url=icon, with_google_fonts=False))


def _document_access(app: FastAPI) -> None:
    """Each operation in the OpenAPI document says who may call it (x-hostbench-access)."""
    from fastapi.openapi.utils import get_openapi

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
        document_errors(schema)  # every operation's 4xx/5xx answers (app.core.openapi)
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def _mount_frontend(app: FastAPI) -> None:
    dist = get_settings().frontend_dist
    if not dist or not (Path(dist) / "index.html").is_file():
        return
    root = Path(dist).resolve()
    if (root / "assets").is_dir():
        app.mount("/assets", StaticFiles(directory=root / "assets"), name="assets")

    @app.get("/{path:path}", include_in_schema=False)
    def spa(path: str) -> FileResponse:
        if path.startswith("api/"):
            raise NotFound(f"no API route /{path}")
        candidate = (root / path).resolve()
        if path and candidate.is_file() and candidate.is_relative_to(root):
            return FileResponse(candidate)
        return FileResponse(root / "index.html")


app = create_app()
