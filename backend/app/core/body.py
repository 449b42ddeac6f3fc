"""Request bodies: bounded in size, and JSON numbers finite (docs/reliability.md, rules 7 and 8).

Pure ASGI, in front of everything:
- a NUL character in the URL (%00 in the query or the path) is refused with 422 (PostgreSQL's text cannot hold
  it, so it can match nothing);
- a body whose Content-Length is over the route's limit (app.core.bounds.body_limit) is refused with 413 before
  a byte of it is read; a chunked one is read only up to the limit, then refused the same way;
- a JSON body is parsed once here with a parser that refuses NaN, Infinity and numbers that overflow a double
  (1e400): Python's json module accepts all three, and one such value stored poisoned every later read of its
  run (PostgreSQL's JSONB refuses NaN; a float column stores it and the API then fails to serialise it). The
  refusal is a 422 whose `loc` names the field;
- a NUL character (\\u0000) or an unpaired surrogate in any JSON string or key is replaced with U+FFFD (the
  replacement character) before the application sees the body: PostgreSQL's text and JSONB can hold neither, and
  a fuzzed heartbeat whose inventory had a NUL in a key reached the database as a 500. Replacing rather than
  refusing keeps a real runner registering when a firmware string it read carries a NUL, and keeps every body
  the OpenAPI document calls valid accepted; numbers are not touched.
- the body is read here, before the request takes an admission slot (app.core.admission is inside this
  middleware): a client that sends its headers and then its body slowly, or never, holds a connection and nothing
  else. The body must keep to a deadline and a minimum rate (app.core.bounds.BODY_GRACE_S, BODY_MIN_RATE), else
  408 and the connection is closed; at most BODIES_PER_ADDRESS bodies are read at once from one client address,
  one more gets 429 (a runner call whose credential was checked before its body, scope[VOUCHED], is not
  counted: app.runner_api.gate). Issue 27: a dozen connections that sent a lease renewal's headers and then
  nothing held every slot, and a running benchmark was failed.
Otherwise the body, once read here, is handed on to the application unchanged, and the document parsed here
with it: routes of class ParsedJSONRoute (the runners', whose sample batches are the largest bodies the API
parses all day) take it instead of parsing the bytes a second time.
"""
import asyncio
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.bounds import BODIES_PER_ADDRESS, BODY_GRACE_S, BODY_MIN_RATE, body_limit

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
REPLACEMENT = "\ufffd"


def _storable(node: Any) -> tuple[Any, bool]:
    """The document with every NUL and unpaired surrogate in its strings and keys replaced (json.loads joins a
    valid surrogate pair into one character, so any surrogate left is unpaired); and whether anything was."""
    if isinstance(node, str):
        fixed = _UNSTORABLE.sub(REPLACEMENT, node)
        return fixed, fixed != node
    if isinstance(node, list):
        items = [_storable(v) for v in node]
        return [v for v, _ in items], any(c for _, c in items)
    if isinstance(node, dict):
        changed = False
        out = {}
        for k, v in node.items():
            k2, ck = _storable(k)
            v2, cv = _storable(v)
            out[k2] = v2
            changed = changed or ck or cv
        return out, changed
    return node, False


_ESCAPED_UNSTORABLE = re.compile(rb"\\u(?:0000|d[89a-f])", re.IGNORECASE)


def _maybe_unstorable(body: bytes) -> bool:
    """A cheap look at the raw bytes first, so a sample batch pays for no second parse: valid JSON can carry a
    NUL or a surrogate only as an escape (a raw one is refused by the parser)."""
    return _ESCAPED_UNSTORABLE.search(body) is not None


def storable_body(body: bytes) -> bytes | None:
    """The body re-encoded with its unstorable characters replaced; None when it needs nothing or is not JSON.
    Called only once parse_checked found every number finite, so re-encoding changes no number."""
    try:
        fixed, changed = _storable(json.loads(body))
    except (ValueError, RecursionError):
        return None
    return json.dumps(fixed, separators=(",", ":")).encode() if changed else None


# A JSON float overflows a double only with a three-digit exponent or, with an exponent of at most 99, some
# 210 digits before the point; a body with neither pattern cannot hold one, and is parsed without a Python call
# per float (a 1,000-sample batch has 3,000 of them). A false alarm costs only the slower parse.
_MAYBE_HUGE = re.compile(rb"[eE]\+?[0-9]{3}|[0-9]{200}")
PARSED = "hostbench.json"  # scope key: the document this middleware parsed, for ParsedJSONRoute


def parse_checked(body: bytes) -> tuple[list[tuple[list[str | int], str]], Any] | None:
    """Where a JSON body holds NaN, ±Infinity or a number beyond a double's range, and the document itself; None
    when it is not JSON (the application then answers with its own parse error). Raises TooDeep for nesting
    Python's parser cannot follow (it would fail again, with a 500, in the application)."""
    seen: list[str] = []

    def constant(token: str) -> _NonFinite:
        seen.append(token)
        return _NonFinite(token)

    def checked_float(text: str) -> float | _NonFinite:
        value = _float(text)
        if isinstance(value, _NonFinite):
            seen.append(text)
        return value

    try:
        if _MAYBE_HUGE.search(body):
            doc = json.loads(body, parse_constant=constant, parse_float=checked_float)
        else:
            doc = json.loads(body, parse_constant=constant)
    except RecursionError as exc:
        raise TooDeep("JSON nested too deeply") from exc
    except ValueError:
        return None
    found: list[tuple[list[str | int], str]] = []
    if not seen:  # every number finite: no walk (it would build a path for every node of a sample batch)
        return found, doc
    stack: list[tuple[Any, list[str | int]]] = [(doc, [])]
    while stack and len(found) < 20:
        node, path = stack.pop()
        if isinstance(node, _NonFinite):
            found.append((path, node.token))
        elif isinstance(node, dict):
            stack.extend((v, [*path, k]) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, [*path, i]) for i, v in enumerate(node))
    return found, doc


def _is_json(scope: Scope) -> bool:
    ctype = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"content-type"), "")
    media = ctype.split(";", 1)[0].strip().lower()
    # FastAPI parses a body with no content type as JSON too
    return media == "" or media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


async def answer(send: Send, status: int, detail: Any, retry_after_s: int | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close")]
    if retry_after_s is not None:
        headers.append((b"retry-after", str(retry_after_s).encode()))
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))  # as app.core.errors answers every 401
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _nul_in_url(scope: Scope) -> str | None:
    """Which part of the URL ("query" or "path") carries a NUL (PostgreSQL's text cannot hold one: a query
    filter with %00 reached the database as a 500, found by schemathesis's stateful phase), else None."""
    if b"%00" in scope.get("query_string", b"") or b"\x00" in scope.get("query_string", b""):
        return "query"
    if "\x00" in scope.get("path", ""):
        return "path"
    return None


VOUCHED = "hostbench.vouched"  # scope key: the caller's credential was checked before its body (app.runner_api.gate)
READING: Counter[str] = Counter()  # bodies being read now, by client address


class SlowBody(Exception):
    pass


async def read_body(receive: Receive, limit: int) -> bytes | int | None:
    """The whole body; or the limit (int) when it is larger; None when the client left. Raises SlowBody when a
    piece comes later than BODY_GRACE_S + received / BODY_MIN_RATE after the start."""
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    chunks: list[bytes] = []
    size = 0
    while True:
        try:
            async with asyncio.timeout_at(t0 + BODY_GRACE_S + size / BODY_MIN_RATE):
                message = await receive()
        except TimeoutError:
            raise SlowBody(f"{size} bytes in {loop.time() - t0:.0f} s") from None
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return limit
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


class BodyLimits:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        nul = _nul_in_url(scope)
        if nul is not None:
            await answer(send, 422, [{"type": "string_nul", "loc": [nul], "msg": "a NUL character (%00) is not "
                                       "allowed in a URL's path or query: nothing can store or match it"}])
            return
        limit = body_limit(scope["path"])
        length = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        if length is not None:
            if not length.strip().isdigit():
                await answer(send, 400, "Content-Length must be a number of bytes")
                return
            if int(length) > limit:
                await answer(send, 413, f"request body of {int(length)} bytes; the limit here is {limit} bytes")
                return
        if scope["method"] in BODYLESS:
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        address = client[0] if client else ""
        counted = VOUCHED not in scope and (length is None or int(length) > 0)  # an empty body takes no time
        if counted and READING[address] >= BODIES_PER_ADDRESS:
            await answer(send, 429, f"{BODIES_PER_ADDRESS} request bodies from this address are being received "
                                     "already; send this one when one of them is done", retry_after_s=1)
            return
        if counted:
            READING[address] += 1
        try:
            got = await read_body(receive, limit)
        except SlowBody as exc:
            await answer(send, 408, f"request body too slow ({exc}): it must start within {BODY_GRACE_S:.0f} s "
                                     f"and then arrive at {BODY_MIN_RATE // 1024} KiB/s or faster")
            return
        finally:
            if counted:
                READING[address] -= 1
                if READING[address] <= 0:
                    del READING[address]
        if got is None:
            return
        if isinstance(got, int):
            await answer(send, 413, f"request body over the limit of {limit} bytes here")
            return
        body = got
        if body and _is_json(scope):
            try:
                checked = parse_checked(body)
            except TooDeep:
                await answer(send, 422, [{"type": "json_invalid", "loc": ["body"], "msg": "JSON nested too deeply"}])
                return
            bad = checked[0] if checked is not None else None
            if bad:
                await answer(send, 422, [
                    {"type": "finite_number", "loc": ["body", *path],
                     "msg": f"{token[:40]} is not a finite number: NaN, Infinity and numbers beyond ±1.8e308 are "
                            "refused"}
                    for path, token in bad])
                return
            fixed = storable_body(body) if _maybe_unstorable(body) else None
            if fixed is not None:
                body = fixed
                scope = dict(scope, headers=[(k, v) for k, v in scope["headers"] if k != b"content-length"]
                             + [(b"content-length", str(len(body)).encode())])
            elif checked is not None:
                scope[PARSED] = checked[1]  # the application need not parse it again (ParsedJSONRoute)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class ParsedJSONRequest(Request):
    """A request whose JSON body BodyLimits has parsed already (scope[PARSED]); any other request as usual."""

    async def json(self) -> Any:
        if PARSED in self.scope:
            return self.scope[PARSED]
        return await super().json()


class ParsedJSONRoute(APIRoute):
    """FastAPI's route, handed a ParsedJSONRequest: the body is parsed once, by BodyLimits, not twice."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def parsed_once(request: Request) -> Response:
            return await handler(ParsedJSONRequest(request.scope, request.receive))

        return parsed_once
