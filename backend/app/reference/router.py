"""Reference-tool outputs produced elsewhere, uploaded and parsed by the same parsers the runner uses.
Unparseable or truncated output is refused (422) with the parser's reason: never a partial figure."""
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query
from hostbench_common.reftools import MAX_UPLOAD_BYTES
from pydantic import BaseModel, ConfigDict
from sqlalchemy import func, select
from starlette.concurrency import run_in_threadpool

from app.audit.service import record
from app.core.bounds import LIST_PAGE_MAX, MAX_BODY_BYTES, Id
from app.core.deps import SessionDep
from app.core.errors import TooMany, Unprocessable
from app.hosts.models import Host
from app.hosts.service import get_host
from app.reference import sandbox
from app.reference.models import ImportedResult
from app.users.auth import OperatorDep, ViewerDep

router = APIRouter(prefix="/api", tags=["reference"])

Tool = Literal["stream", "hpl", "hpcc", "fio", "iozone", "iperf3", "iperf2", "ping", "sockperf"]
MAX_UPLOAD = MAX_UPLOAD_BYTES


class ParsedOutput(BaseModel):
    tool: str
    format: str
    metrics: list[dict[str, Any]]


def _parse(tool: str, text: str) -> dict[str, Any]:
    """The parse in a child process with a CPU-time budget (app/reference/sandbox.py)."""
    try:
        return sandbox.parse(tool, text)
    except sandbox.Refused as exc:
        raise Unprocessable(f"{tool}: {exc}") from exc
    except sandbox.Busy as exc:
        raise TooMany(str(exc), retry_after_s=1) from exc


def _text(body: bytes, limit: int) -> str:
    if len(body) > limit:
        raise Unprocessable(f"output is {len(body)} bytes; the limit is {limit}")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unprocessable(f"output is not UTF-8 text (byte {exc.start})") from exc


@router.post("/reference/parse", response_model=ParsedOutput,
             openapi_extra={"requestBody": {"content": {"text/plain": {"schema": {"type": "string"}}}}})
async def parse_reference_output(
    _: ViewerDep,
    tool: Annotated[Tool, Query(description="the tool that produced the output")],
    body: Annotated[bytes, Body(media_type="text/plain", min_length=1, max_length=MAX_UPLOAD)],
) -> ParsedOutput:
    return ParsedOutput.model_validate(await run_in_threadpool(_parse, tool, _text(body, MAX_UPLOAD)))


# Imports: the same parse, stored as a history row of a host, marked imported (where from, who, when). The figures
# are the server's own reading of the uploaded text, never numbers a client sent. An upload is at most the
# server's general body limit (1 MiB): reference outputs are kilobytes.
MAX_IMPORT = MAX_BODY_BYTES
FileName = Annotated[str | None, Query(max_length=255, pattern=r"^[^\x00-\x1f/\\]*$",
                                       description="the uploaded file's name (no directory), kept with the row")]


class ImportedResultPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    host_id: int
    host_name: str
    tool: str
    format: str
    file_name: str | None
    metrics: list[dict[str, Any]]
    imported: Literal[True] = True
    imported_by: str
    imported_at: datetime


class ImportedResultsPublic(BaseModel):
    data: list[ImportedResultPublic]
    count: int


def _public(row: ImportedResult, host_name: str) -> ImportedResultPublic:
    return ImportedResultPublic(id=row.id, host_id=row.host_id, host_name=host_name, tool=row.tool, format=row.format,
                                file_name=row.file_name, metrics=row.metrics, imported_by=row.imported_by,
                                imported_at=row.imported_at)


@router.post("/reference/imports", response_model=ImportedResultPublic, status_code=201,
             openapi_extra={"requestBody": {"content": {"text/plain": {"schema": {"type": "string"}}}}})
def import_reference_output(
    p: OperatorDep,
    session: SessionDep,
    host_id: Annotated[Id, Query(description="the host whose history gets the row")],
    tool: Annotated[Tool, Query(description="the tool that produced the output")],
    body: Annotated[bytes, Body(media_type="text/plain", min_length=1, max_length=MAX_IMPORT)],
    file_name: FileName = None,
) -> ImportedResultPublic:
    host = get_host(session, host_id)  # 404 for an unknown host, before parsing anything
    parsed = _parse(tool, _text(body, MAX_IMPORT))
    row = ImportedResult(host_id=host.id, tool=parsed["tool"], format=parsed["format"], file_name=file_name or None,
                         metrics=parsed["metrics"], imported_by=p.name)
    session.add(row)
    session.flush()
    record(session, p.name, "reference.import", f"host {host.id}", tool=row.tool, file_name=row.file_name,
           imported_result=row.id)
    session.commit()
    return _public(row, host.name)


@router.get("/reference/imports", response_model=ImportedResultsPublic)
def read_imported_results(
    _: ViewerDep,
    session: SessionDep,
    host_id: Id | None = None,
    limit: Annotated[int, Query(ge=1, le=LIST_PAGE_MAX)] = 50,
    offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
) -> ImportedResultsPublic:
    where = [ImportedResult.host_id == host_id] if host_id is not None else []
    count = session.scalar(select(func.count()).select_from(ImportedResult).where(*where)) or 0
    rows = session.execute(select(ImportedResult, Host.name).join(Host, Host.id == ImportedResult.host_id)
                           .where(*where).order_by(ImportedResult.id.desc()).limit(limit).offset(offset)).all()
    return ImportedResultsPublic(data=[_public(r, name) for r, name in rows], count=count)
