"""The allowed-hosts check (docs/security.md): a DNS-rebinding page reaches us under a host *name* the attacker
controls, so a Host header must be an IP literal, localhost, the public URL's host, or a name listed in
HOSTBENCH_ALLOWED_HOSTS. Pure ASGI, so it costs one header look-up per request."""
import ipaddress
import json
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from app.core.config import get_settings


def host_allowed(host_header: str) -> bool:
    host = host_header.strip().lower()
    if host.startswith("["):  # [v6]:port
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    if not host:
        return False
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    s = get_settings()
    allowed = {"localhost", *s.allowed_hosts}
    if s.hostbench_public_url:
        allowed.add((urlsplit(s.hostbench_public_url).hostname or "").lower())
    return host in allowed


class AllowedHosts:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")
        if host_allowed(host):
            await self.app(scope, receive, send)
            return
        body = json.dumps({"detail": f"host {host[:100]!r} is not allowed; add it to HOSTBENCH_ALLOWED_HOSTS "
                                     "or set HOSTBENCH_PUBLIC_URL"}).encode()
        await send({"type": "http.response.start", "status": 400,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
