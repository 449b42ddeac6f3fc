"""The API application: its middleware, its routers, the pages it serves. Only the composition; what runs beside
the requests is app.reconciler (the lifespan, the reconcile loop), the pages besides the API are app.web."""
import logging

from fastapi import FastAPI
from fastapi.telemetry import TelemetryConfig

from app.bands.router import router as bands_router
from app.checks.router import router as checks_router
from app.core.admission import HEALTH_PATH, Admission
from app.core.auth import PUBLIC
from app.core.body import BodyLimits
from app.core.config import get_settings
from app.core.errors import install_error_handlers
from app.core.headers import SecurityHeaders
from app.core.hostcheck import AllowedHosts
from app.core.openapi import document_access
from app.health import Health, health
from app.hosts.router import router as hosts_router
from app.hosts.slurm import router as slurm_router
from app.install.router import router as install_router
from app.jobs.retire_router import router as retire_router
from app.jobs.router import router as jobs_router
from app.live.router import router as live_router
from app.mesh.router import router as mesh_router
from app.readserve import ReadCacheMiddleware
from app.reconciler import lifespan
from app.reference.router import router as reference_router
from app.reports.router import router as reports_router
from app.runner_api.gate import RunnerCredentials
from app.runner_api.router import router as runner_router
from app.schedules.router import router as schedules_router
from app.suites.router import router as suites_router
from app.trends.router import router as trends_router
from app.users.audit_router import router as audit_router
from app.users.router import router as users_router
from app.web import api_docs, mount_frontend

NO_TELEMETRY: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False, "operation_spans": False}


def create_app() -> FastAPI:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # /docs and /redoc are served below from the dashboard's build (no CDN: they work without internet)
    # FastAPI's built-in OpenTelemetry hooks off: nothing here exports spans, and asking for the global providers
    # on every request and around every dependency cost the dashboard's event loop 5 % of its time under load
    # (py-spy, ./hostbench load, issue 11)
    app = FastAPI(title="hostbench", version=get_settings().hostbench_version, docs_url=None, redoc_url=None,
                  lifespan=lifespan, telemetry=NO_TELEMETRY)
    install_error_handlers(app)
    # Outermost last. A body is read (deadline, minimum rate, per-address bound) before its request takes an
    # admission slot, and a runner's credential is checked before its body is read (issue 27)
    app.add_middleware(Admission)  # requests wait in the event loop for a slot of their class (app.core.admission)
    app.add_middleware(ReadCacheMiddleware)  # a read made a moment ago answered from its bytes (app.core.readcache)
    app.add_middleware(BodyLimits)  # size limits, finite numbers, slow bodies cut off (app.core.body)
    app.add_middleware(RunnerCredentials)  # /api/runner/: 401 before the body (app.runner_api.gate)
    app.add_middleware(AllowedHosts)
    app.add_middleware(SecurityHeaders)  # outermost: every answer, a 400, 429 or 503 included (app.core.headers)
    app.add_api_route(HEALTH_PATH, health, methods=["GET"], response_model=Health, tags=["health"],
                      dependencies=[PUBLIC])
    # app.jobs.retire_router holds two of the hosts' routes (revoking and deleting a host end its runs)
    for r in (users_router, hosts_router, retire_router, jobs_router, live_router, runner_router, reference_router,
              audit_router, trends_router, suites_router, reports_router, schedules_router, install_router,
              slurm_router, mesh_router, bands_router, checks_router):
        app.include_router(r)
    api_docs(app)  # /docs and /redoc (app.web)
    mount_frontend(app)  # the dashboard, last: its catch-all route must not shadow one of the API's
    document_access(app)  # who may call each operation, in the OpenAPI document (app.core.openapi)
    return app


app = create_app()
