import logging
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from sqlalchemy import text

from app.core.broker import get_redis
from app.core.config import get_settings
from app.core.db import get_sessionmaker
from app.core.errors import NotFound, install_error_handlers
from app.hosts.router import router as hosts_router
from app.hosts.service import runners_online
from app.jobs.router import router as jobs_router
from app.live.router import router as live_router
from app.reference.router import router as reference_router
from app.runner_api.router import router as runner_router


class Health(BaseModel):
    status: str
    database: str
    broker: str
    runners_online: int
    version: str


def health() -> Health:
    db, online = "ok", 0
    try:
        with get_sessionmaker()() as session:
            session.execute(text("select 1"))
            online = runners_online(session)
    except Exception as exc:  # noqa: BLE001 - health reports, never raises
        db = f"error: {type(exc).__name__}"
    try:
        get_redis().ping()
        br = "ok"
    except Exception as exc:  # noqa: BLE001
        br = f"error: {type(exc).__name__}"
    ok = db == "ok" and br == "ok"
    return Health(status="ok" if ok else "degraded", database=db, broker=br, runners_online=online,
                  version=get_settings().hostbench_version)


def create_app() -> FastAPI:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = FastAPI(title="hostbench", version=get_settings().hostbench_version)
    install_error_handlers(app)
    app.add_api_route("/api/health", health, methods=["GET"], response_model=Health, tags=["health"])
    for r in (hosts_router, jobs_router, live_router, runner_router, reference_router):
        app.include_router(r)
    _mount_frontend(app)
    return app


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
