"""The report of a set of runs (issue 15): GET /api/report gives its data as JSON, GET /api/report/html the same as
one self-contained HTML file. Viewers may read both, as they may read each run (docs/security.md)."""
import re
from typing import Annotated

from fastapi import APIRouter, Query, Response

from app.core.bounds import MAX_ID, Id
from app.core.deps import SessionDep
from app.core.errors import NotFound
from app.core.headers import FRAME_ANCESTORS
from app.reports import html
from app.reports.schemas import Report
from app.reports.service import build_report
from app.users.auth import ViewerDep

router = APIRouter(prefix="/api", tags=["reports"])

# Syntax only (at most 2,600 characters); more than MAX_REPORT_RUNS distinct runs is a 422 from the service.
RunIds = Annotated[str | None, Query(pattern=r"^\d{1,12}(,\d{1,12})*$", max_length=2600,
                                     description="comma-separated run ids (at most 50 runs)")]
JobId = Annotated[Id | None, Query(description="every run of one job (at most 50)")]
SuiteRunId = Annotated[Id | None, Query(description="every run of one suite run (at most 50)")]


def _ids(runs: str | None) -> list[int] | None:
    if runs is None:
        return None
    ids = [int(i) for i in runs.split(",")]
    bad = [i for i in ids if not 1 <= i <= MAX_ID]
    if bad:
        raise NotFound(f"run {bad[0]} not found")
    return ids


@router.get("/report", response_model=Report)
def read_report(_: ViewerDep, session: SessionDep, runs: RunIds = None, job: JobId = None,
                suite: SuiteRunId = None) -> Report:
    return build_report(session, _ids(runs), job, suite)


@router.get("/report/html", response_class=Response, responses={200: {"content": {"text/html": {}}}})
def download_report(_: ViewerDep, session: SessionDep, runs: RunIds = None, job: JobId = None,
                    suite: SuiteRunId = None) -> Response:
    report = build_report(session, _ids(runs), job, suite)
    name = "hostbench-report-" + re.sub(r"[^A-Za-z0-9._-]+", "-", report.selection).strip("-") + ".html"
    return Response(html.render(report), media_type="text/html; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"',
                             "Content-Security-Policy": f"{html.csp()}; {FRAME_ANCESTORS}"})
