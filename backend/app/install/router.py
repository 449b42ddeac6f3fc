"""GET /api/install/runner.sh and /api/install/hostbench-runner.tar.gz: public (docs/security.md), they hold
the open-source runner and kernel sources only, never a secret."""
from __future__ import annotations

from fastapi import APIRouter, Request, Response

from app.core.auth import PUBLIC
from app.core.errors import Unavailable
from app.install import service

router = APIRouter(prefix="/api/install", tags=["install"])


@router.get("/runner.sh", dependencies=[PUBLIC], response_class=Response,
            responses={200: {"content": {"text/x-shellscript": {}},
                             "description": "the POSIX sh install script"}})
def runner_script() -> Response:
    """The install script: `curl -fsSL .../api/install/runner.sh | sh -s -- --server URL --token T`."""
    try:
        body = service.install_script()
    except service.RunnerSourcesMissing as exc:
        raise Unavailable(str(exc)) from exc
    return Response(body, media_type="text/x-shellscript; charset=utf-8",
                    headers={"Cache-Control": "no-cache"})


@router.get(f"/{service.TARBALL_NAME}", dependencies=[PUBLIC], response_class=Response,
            responses={200: {"content": {"application/gzip": {}}, "description": "the runner's sources"},
                       304: {"description": "not modified (If-None-Match)"}})
def runner_tarball(request: Request) -> Response:
    """The runner's sources as a gzip tarball: the package, the kernels' sources and Makefile, the install
    script and, at its root, a Dockerfile (`docker build URL`)."""
    try:
        tarball = service.runner_tarball()
    except service.RunnerSourcesMissing as exc:
        raise Unavailable(str(exc)) from exc
    etag = f'"{tarball.etag}"'
    headers = {"ETag": etag, "Cache-Control": "no-cache",
               "Content-Disposition": f'attachment; filename="{service.TARBALL_NAME}"'}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    return Response(tarball.data, media_type="application/gzip", headers=headers)
