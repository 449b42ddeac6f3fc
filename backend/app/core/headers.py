"""Security headers on every answer of this server: the dashboard, the API and the downloaded report.

- `X-Content-Type-Options: nosniff`: a browser never runs an answer as a type other than the one declared.
- `X-Frame-Options: DENY` and CSP `frame-ancestors 'none'`: no page of another site can frame ours (clickjacking).
- `Referrer-Policy: same-origin`.
- `Content-Security-Policy`: the dashboard runs only its own scripts (`script-src 'self'`, no inline script: the
  theme is set by /theme.js), talks only to this origin, and loads nothing from elsewhere; an API answer is data,
  never a page (`default-src 'none'`). A route that sets its own policy keeps it (the API docs, the report).
The compose deployment's nginx serves the dashboard's files itself and sends DASHBOARD_CSP too
(deploy/nginx/hostbench-locations.conf; a test keeps the two equal). docs/security.md lists them.
"""
from starlette.types import ASGIApp, Message, Receive, Scope, Send

FRAME_ANCESTORS = "frame-ancestors 'none'"
DASHBOARD_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
                 "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; " + FRAME_ANCESTORS)
API_CSP = "default-src 'none'; " + FRAME_ANCESTORS
ALWAYS = ((b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY"),
          (b"referrer-policy", b"same-origin"))


class SecurityHeaders:
    """Pure ASGI (no buffering, so live streams pass as they come): adds the headers to every response start."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        csp = (API_CSP if scope["path"].startswith("/api/") else DASHBOARD_CSP).encode()

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in ALWAYS if k not in names]
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", csp))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
