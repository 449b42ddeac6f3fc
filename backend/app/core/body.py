"""Request bodies: bounded in size, and JSON numbers finite (docs/reliability.md, rules 7 and 8).

Pure ASGI, in front of everything:
- a body whose Content-Length is over the route's limit (app.core.bounds.body_limit) is refused with 413 before
  a byte of it is read; a chunked one is read only up to the limit, then refused the same way;
- a JSON body is parsed once here with a parser that refuses NaN, Infinity and numbers that overflow a double
  (1e400): Python's json module accepts all three, and one such value stored poisoned every later read of its
  run (PostgreSQL's JSONB refuses NaN; a float column stores it and the API then fails to serialise it). The
  refusal is a 422 whose `loc` names the field;
- a JSON string (key or value) holding a NUL character (\\u0000) or an unpaired surrogate is refused the same way:
  PostgreSQL's text and JSONB cannot hold either, and one reached the database as a 500 (a fuzzed heartbeat
  inventory with a NUL in a key).
The body, once read here, is handed on to the application unchanged.
"""
import json
import math
import re
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.bounds import body_limit

BODYLESS = frozenset({"GET", "HEAD", "OPTIONS"})


class _NonFinite:
    def __init__(self, token: str):
        self.token = token


def _float(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


class TooDeep(ValueError):
    pass


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _unstorable(text: str) -> bool:
    """A NUL or an unpaired surrogate: neither can be stored in PostgreSQL text (json.loads joins a valid
    surrogate pair into one character, so any surrogate left is unpaired)."""
    return _UNSTORABLE.search(text) is not None


def non_finite_paths(body: bytes) -> list[tuple[list[str | int], str]] | None:
    """Where a JSON body holds NaN, ±Infinity or a number beyond a double's range, or a string PostgreSQL cannot
    store (a NUL or an unpaired surrogate; its token starts with "string:"); None when it is not JSON
    (the application then answers with its own parse error). Raises TooDeep for nesting Python's parser cannot
    follow (it would fail again, with a 500, in the application)."""
    try:
        doc = json.loads(body, parse_constant=_NonFinite, parse_float=_float)
    except RecursionError as exc:
        raise TooDeep("JSON nested too deeply") from exc
    except ValueError:
        return None
    found: list[tuple[list[str | int], str]] = []
    stack: list[tuple[Any, list[str | int]]] = [(doc, [])]
    while stack and len(found) < 20:
        node, path = stack.pop()
        if isinstance(node, _NonFinite):
            found.append((path, node.token))
        elif isinstance(node, str):
            if _unstorable(node):
                found.append((path, "string:"))
        elif isinstance(node, dict):
            for k, v in node.items():
                if _unstorable(k):
                    found.append(([*path, k.encode("utf-8", "backslashreplace").decode()], "string:"))
            stack.extend((v, [*path, k]) for k, v in node.items() if not _unstorable(k))
        elif isinstance(node, list):
            stack.extend((v, [*path, i]) for i, v in enumerate(node))
    return found


def _is_json(scope: Scope) -> bool:
    ctype = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"content-type"), "")
    media = ctype.split(";", 1)[0].strip().lower()
    # FastAPI parses a body with no content type as JSON too
    return media == "" or media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def _refusal(path: list[str | int], token: str) -> dict[str, Any]:
    safe = [p.encode("utf-8", "backslashreplace").decode() if isinstance(p, str) else p for p in path]
    if token.startswith("string:"):
        return {"type": "string_unstorable", "loc": ["body", *safe],
                "msg": "a NUL character (\\u0000) or an unpaired surrogate is refused in any string or key"}
    return {"type": "finite_number", "loc": ["body", *safe],
            "msg": f"{token[:40]} is not a finite number: NaN, Infinity and numbers beyond ±1.8e308 are refused"}


async def _answer(send: Send, status: int, detail: Any) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class BodyLimits:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = body_limit(scope["path"])
        length = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        if length is not None:
            if not length.strip().isdigit():
                await _answer(send, 400, "Content-Length must be a number of bytes")
                return
            if int(length) > limit:
                await _answer(send, 413, f"request body of {int(length)} bytes; the limit here is {limit} bytes")
                return
        if scope["method"] in BODYLESS:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _answer(send, 413, f"request body over the limit of {limit} bytes here")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if body and _is_json(scope):
            try:
                bad = non_finite_paths(body)
            except TooDeep:
                await _answer(send, 422, [{"type": "json_invalid", "loc": ["body"], "msg": "JSON nested too deeply"}])
                return
            if bad:
                await _answer(send, 422, [_refusal(path, token) for path, token in bad])
                return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
