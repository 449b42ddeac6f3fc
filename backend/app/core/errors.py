"""One error hierarchy, mapped once to {"detail": ...} responses."""
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse


class HostbenchError(Exception):
    status_code = 400

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class BadRequest(HostbenchError):
    status_code = 400


class Unauthorized(HostbenchError):
    status_code = 401


class NotFound(HostbenchError):
    status_code = 404


class Conflict(HostbenchError):
    status_code = 409


class Unprocessable(HostbenchError):
    status_code = 422


class TooMany(HostbenchError):
    status_code = 429


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(HostbenchError)
    async def _handle(_: Request, exc: HostbenchError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, Unauthorized) else None
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=headers)
