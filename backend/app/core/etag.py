"""Entity tags for reads (issue 31): an unchanged answer costs a 304 and no body. A tag is a digest of what the
answer is made of: the body itself, or, where the body is costly to build, the few facts it is a function of
(app.jobs.router's run read). Answers carry `Cache-Control: private, no-cache`: a browser keeps them and asks again
with If-None-Match every time, never serving a stale one by itself."""
import hashlib
import json
from typing import Any

from fastapi import Request, Response
from pydantic import BaseModel

CACHE_CONTROL = "private, no-cache"


def tag_of(*parts: Any) -> str:
    """A strong tag from JSON-able parts (dates and the like as their str())."""
    data = json.dumps(parts, default=str, sort_keys=True, separators=(",", ":")).encode()
    return f'"{hashlib.blake2b(data, digest_size=16).hexdigest()}"'


def matches(request: Request, etag: str) -> bool:
    """Does the request's If-None-Match name this tag (a list, weak tags and * included)?"""
    sent = request.headers.get("if-none-match")
    if not sent:
        return False
    tags = [t.strip().removeprefix("W/") for t in sent.split(",")]
    return "*" in tags or etag in tags


def not_modified(etag: str) -> Response:
    return Response(status_code=304, headers={"ETag": etag, "Cache-Control": CACHE_CONTROL})




def answer(request: Request, body: BaseModel, etag: str | None = None) -> Response:
    """The model as JSON, serialised once (a route that returns a Response skips the response model's second pass),
    tagged by `etag` or else by the digest of those bytes; 304 when the request's If-None-Match names the tag."""
    data = body.model_dump_json().encode()
    if etag is None:
        etag = f'"{hashlib.blake2b(data, digest_size=16).hexdigest()}"'
    if matches(request, etag):
        return not_modified(etag)
    return Response(data, media_type="application/json", headers={"ETag": etag, "Cache-Control": CACHE_CONTROL})
