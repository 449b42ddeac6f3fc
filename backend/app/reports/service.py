"""Gather a report: the runs named (by ids or by job), as the run API gives them, the hosts they ran on, the trace
points and the methodology of each area present. Nothing is recomputed here: a run's result is app.jobs.service's
run_public (the same as GET /api/runs/{id})."""
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.db import utcnow
from app.core.errors import NotFound, Unprocessable
from app.experiments.registry import RUNS
from app.hosts.models import Host
from app.hosts.service import to_public
from app.jobs import service as jobs
from app.jobs.models import Job, Run, SuiteRun
from app.jobs.samples import measured
from app.reports.methodology import AREA_TITLES, AREAS, KERNEL_AREA, METHODOLOGY, STATISTICS, Area, source
from app.reports.schemas import Report, ReportArea, ReportRun
from app.reports.summary import summarise
from app.suites import service as suites

MAX_REPORT_RUNS = 50  # one report, one page: a suite's runs fit; more is a 422 naming the limit
TRACE_POINTS = 600


def area_of(experiment: str) -> Area | None:
    run = RUNS.get(experiment)
    return KERNEL_AREA.get(run.kernel) if run is not None else None


def trace_points(session: Session, run: Run) -> tuple[list[tuple[float, float]], int]:
    """A trace run's measured (not warm-up) samples of its latest attempt, as (s since the first, value)."""
    rows = measured(session, run)
    if not rows:
        return [], 1
    t0 = rows[0][0]
    bucket = -(-len(rows) // TRACE_POINTS)
    out = []
    for i in range(0, len(rows), bucket):
        chunk = rows[i:i + bucket]
        out.append((round(chunk[0][0] - t0, 3), sum(v for _, v in chunk) / len(chunk)))
    return out, bucket


def select_runs(session: Session, run_ids: list[int] | None, job_id: int | None,
                suite_run_id: int | None = None) -> tuple[list[Run], str]:
    if sum(x is not None for x in (run_ids, job_id, suite_run_id)) != 1:
        raise Unprocessable("name the runs of the report: runs=1,2,3, job=7 or suite=3 (one of them)")
    if suite_run_id is not None:
        sr = session.get(SuiteRun, suite_run_id)
        if sr is None:
            raise NotFound(f"suite run {suite_run_id} not found")
        runs = suites.runs_of(session, suite_run_id)
        label = f"suite run {suite_run_id} ({sr.title})"
    elif job_id is not None:
        if session.get(Job, job_id) is None:
            raise NotFound(f"job {job_id} not found")
        runs = list(session.scalars(select(Run).where(Run.job_id == job_id).order_by(Run.id)))
        label = f"job {job_id}"
    else:
        wanted = list(dict.fromkeys(run_ids or []))
        if len(wanted) > MAX_REPORT_RUNS:
            raise Unprocessable(f"a report holds at most {MAX_REPORT_RUNS} runs; {len(wanted)} were named")
        found = {r.id: r for r in session.scalars(select(Run).where(Run.id.in_(wanted)))}
        missing = [i for i in wanted if i not in found]
        if missing:
            raise NotFound(f"run{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} not found")
        runs = [found[i] for i in wanted]
        label = "run" + ("s " if len(runs) > 1 else " ") + ", ".join(str(r.id) for r in runs)
    if len(runs) > MAX_REPORT_RUNS:
        raise Unprocessable(f"a report holds at most {MAX_REPORT_RUNS} runs; {label} has {len(runs)}")
    if not runs:
        raise NotFound(f"{label} has no runs")
    return runs, label


def build_report(session: Session, run_ids: list[int] | None, job_id: int | None,
                 suite_run_id: int | None = None) -> Report:
    runs, label = select_runs(session, run_ids, job_id, suite_run_id)
    out: list[ReportRun] = []
    for run in runs:
        public = jobs.run_public(session, run)
        points, bucket = trace_points(session, run) if public.result and public.result.trace else ([], 1)
        out.append(ReportRun(**public.model_dump(), area=area_of(run.experiment), trace_points=points,
                             trace_bucket=bucket))
    host_ids = list(dict.fromkeys(r.host_id for r in runs))
    hosts = {h.id: h for h in session.scalars(select(Host).where(Host.id.in_(host_ids)))}
    areas = [ReportArea(area=a, title=AREA_TITLES[a], run_ids=[r.id for r in out if r.area == a],
                        methodology=METHODOLOGY[a], source=source(a))
             for a in AREAS if any(r.area == a for r in out)]
    public_hosts = [to_public(hosts[i]) for i in host_ids if i in hosts]
    return Report(generated_at=utcnow(), selection=label, summary=summarise(out, [h.name for h in public_hosts]),
                  hosts=public_hosts, runs=out, areas=areas, statistics=STATISTICS)
