"""Reference-tool outputs produced elsewhere, uploaded and parsed by the same parsers the runner uses.
Unparseable or truncated output is refused (422) with the parser's reason: never a partial figure."""
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from app.core.errors import Unprocessable
from app.users.auth import ViewerDep

router = APIRouter(prefix="/api", tags=["reference"])

Tool = Literal["stream", "hpl", "hpcc", "fio", "iozone", "iperf3", "iperf2", "ping", "sockperf"]
MAX_UPLOAD = 8 * 1024 * 1024


class ParsedOutput(BaseModel):
    tool: str
    format: str
    metrics: list[dict[str, Any]]


def _parse(tool: str, text: str) -> dict[str, Any]:
    from hostbench_common.reftools import ParseError, parse_text

    try:
        return parse_text(tool, text)
    except ParseError as exc:
        raise Unprocessable(f"{tool}: {exc}") from exc


@router.post("/reference/parse", response_model=ParsedOutput,
             openapi_extra={"requestBody": {"content": {"text/plain": {"schema": {"type": "string"}}}}})
async def parse_reference_output(
    _: ViewerDep,
    tool: Annotated[Tool, Query(description="the tool that produced the output")],
    body: Annotated[bytes, Body(media_type="text/plain", min_length=1, max_length=MAX_UPLOAD)],
) -> ParsedOutput:
    if len(body) > MAX_UPLOAD:
        raise Unprocessable(f"output is {len(body)} bytes; the limit is {MAX_UPLOAD}")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unprocessable(f"output is not UTF-8 text (byte {exc.start})") from exc
    return ParsedOutput.model_validate(await run_in_threadpool(_parse, tool, text))
