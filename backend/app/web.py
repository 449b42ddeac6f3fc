"""What the API process serves besides the API: the API's pages (/docs, /redoc) from the dashboard's build, and the
dashboard itself (a single-page app: any path that is no API route and no file gives index.html)."""
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

from app.core.config import get_settings
from app.core.errors import NotFound
from app.core.headers import FRAME_ANCESTORS

# Swagger UI's and ReDoc's scripts, copied from npm (swagger-ui-dist, redoc) into the dashboard's build by
# frontend/vite.config.ts: served by this server, so the API pages load without internet.
API_DOCS_ASSETS = "/api-docs"


def api_docs(app: FastAPI) -> None:
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


def mount_frontend(app: FastAPI) -> None:
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
