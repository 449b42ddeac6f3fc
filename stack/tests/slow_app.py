"""A tiny ASGI application whose import takes SLOW_APP_IMPORT_S seconds of CPU (test_start_progress.py): an
application still loading, as app.main is on a small, busy machine."""
import os
import time

_end = time.process_time() + float(os.environ.get("SLOW_APP_IMPORT_S", "0"))
while time.process_time() < _end:
    pass


async def app(scope, receive, send):  # noqa: ANN001, ANN201
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = f'{{"status": "ok", "runners_online": 0, "pid": {os.getpid()}}}'.encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})
