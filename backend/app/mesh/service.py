"""Hosts tested together: a mesh's jobs, created at once in rounds (app.jobs.rounds), and its matrix."""
import statistics
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.csvcell import Writer
from app.core.db import utcnow
from app.core.errors import NotFound
from app.hosts.models import Host
from app.jobs import pairing
from app.jobs import service as jobs
from app.jobs.mesh_models import Mesh, MeshJob
from app.jobs.models import ACTIVE, Job, Run, RunStatus
from app.jobs.rounds import circle
from app.jobs.schemas import JOB_CREATE, JobCreateBase
from app.jobs.stored import stored_result
from app.mesh import verdict
from app.mesh.schemas import MeshCell, MeshCreate, MeshHost, MeshLink, MeshPublic, MeshSlowHost, MeshStatus

PAIR_JOB = next(m for m in JOB_CREATE if m.__name__ == "NetworkPairJobCreate")
# a run that measured (untrusted: its figures stand, its runner is doubted)
DONE = (RunStatus.succeeded, RunStatus.untrusted)


def plan(body: MeshCreate) -> list[list[list[int]]]:
    """The mesh's rounds: each a list of host lists, [serving host, driving host(s)...], one job per op each."""
    if body.mode == "many_to_one":
        assert body.server_host_id is not None
        return [[[body.server_host_id, *body.host_ids]]]
    return [[[s, d] for s, d in pairs] for pairs in circle(body.host_ids, body.mode == "all_pairs_both_ways")]


def _job_body(hosts: list[int], params: dict[str, Any]) -> JobCreateBase:
    """A network_pair job's body. Many to one names more than two hosts, which a person's job may not (its model
    says two): its hosts were checked one by one by MeshCreate, its params by the same model."""
    if len(hosts) == 2:
        return PAIR_JOB.model_validate({"experiment": "network_pair", "host_ids": hosts, "params": params})
    one = PAIR_JOB.model_validate({"experiment": "network_pair", "host_ids": hosts[:2], "params": params})
    return PAIR_JOB.model_construct(experiment="network_pair", host_ids=hosts, params=one.params)


def create(session: Session, body: MeshCreate, created_by: str | None) -> Mesh:
    """Every job of the mesh at once (or none: a 422 or 429 names why), each tied to its round. Many to one: one
    job per op, each with one serve run and a drive run per client, its ops in rounds of their own."""
    rounds = plan(body)
    per_op = body.mode == "many_to_one"
    mesh = Mesh(mode=body.mode, host_ids=list(body.host_ids), server_host_id=body.server_host_id, ops=list(body.ops),
                params=dict(body.params), rounds=len(rounds) * (len(body.ops) if per_op else 1),
                created_by=created_by)
    session.add(mesh)
    session.flush()
    for r, groups in enumerate(rounds):
        for k, op in enumerate(body.ops):
            for hosts in groups:
                job = jobs.create_job(session, _job_body(hosts, body.job_params(op)), created_by, commit=False)
                session.add(MeshJob(job_id=job.id, mesh_id=mesh.id, round=r * len(body.ops) + k if per_op else r))
    session.flush()
    return mesh


def get(session: Session, mesh_id: int) -> Mesh:
    mesh = session.get(Mesh, mesh_id)
    if mesh is None:
        raise NotFound(f"mesh {mesh_id} not found")
    return mesh


def recent(session: Session, limit: int) -> list[Mesh]:
    return list(session.scalars(select(Mesh).order_by(Mesh.id.desc()).limit(limit)))


def runs_of(session: Session, mesh_id: int) -> list[tuple[Run, Job, int]]:
    """(run, its job, its round) of every job of the mesh, by run id."""
    q = (select(Run, Job, MeshJob.round).join(Job, Job.id == Run.job_id).join(MeshJob, MeshJob.job_id == Job.id)
         .where(MeshJob.mesh_id == mesh_id).order_by(Run.id))
    return [(r, j, n) for r, j, n in session.execute(q).all()]


def cancel(session: Session, mesh: Mesh, by: str | None) -> list[int]:
    """Cancel every run of the mesh still queued or running; the hosts to ring."""
    ids = [r.id for r, _, _ in runs_of(session, mesh.id) if r.status in ACTIVE]
    mesh.cancelled_by = by
    session.commit()
    return sorted({jobs.cancel_run(session, run_id, by).host_id for run_id in ids})


def _figure(run: Run, op: str) -> tuple[float | None, str | None]:
    """The driving run's figure for its op (tcp_stream: the best row's mean Mbit/s; tcp_rr: the lowest median
    round trip, µs) and its validity verdict."""
    result = stored_result(run)  # stored at the run's finish (app.jobs.stored): a read computes nothing
    if result is None or not result.rows:
        return None, None
    if op == "tcp_rr":
        rtts = [row.extra["latency_p50_us"] for row in result.rows if "latency_p50_us" in row.extra]
        return (min(rtts) if rtts else None), result.verdict
    return max(row.mean for row in result.rows), result.verdict


def _cell_status(statuses: list[str]) -> str:
    for s in (RunStatus.running, RunStatus.dispatched, RunStatus.queued, RunStatus.failed, RunStatus.cancelled):
        if s in statuses:
            return s
    return "succeeded"


def public(session: Session, mesh: Mesh, *, figures: bool = True) -> MeshPublic:
    """The mesh and its matrix. figures=False (the list): its cells' statuses only, no run's result read."""
    rows = runs_of(session, mesh.id)
    wanted = {*mesh.host_ids, *([mesh.server_host_id] if mesh.server_host_id else [])}
    names: dict[int, str] = dict(session.execute(select(Host.id, Host.name).where(Host.id.in_(wanted))).all())
    serve_of = {r.id: r for r, _, _ in rows if pairing.role(r) == "serve"}
    cells: dict[tuple[int, int], dict[str, Any]] = {}
    for run, job, rnd in rows:
        if pairing.role(run) != "drive":
            continue
        serve = serve_of.get(int(run.params.get("server_run_id") or 0))
        if serve is None:
            continue
        one = cells.setdefault((serve.host_id, run.host_id), {"round": rnd, "statuses": [], "figures": [], "runs": {}})
        one["round"] = min(one["round"], rnd)
        one["statuses"] += [run.status, serve.status]
        op = str(job.params.get("op"))
        one["runs"][op] = run
        if figures and run.status in DONE:
            value, validity = _figure(run, op)
            if value is not None:
                one[op] = value
                unit = "us" if op == "tcp_rr" else "Mbit/s"
                one["figures"].append((verdict.Figure(run, serve.host_id, op, value, unit), validity))
    out: list[MeshCell] = []
    for (server, client), got in sorted(cells.items(), key=lambda kv: (kv[1]["round"], kv[0])):
        v, why = verdict.judge(session, got["figures"])
        validities = [val for _, val in got["figures"]]
        worst = next((val for val in validities if val != "valid"), validities[0] if validities else None)
        out.append(MeshCell(server_host_id=server, client_host_id=client, round=got["round"],
                            status=_cell_status(got["statuses"]), mbps=got.get("tcp_stream"),
                            rtt_us=got.get("tcp_rr"), stream_run_id=getattr(got["runs"].get("tcp_stream"), "id", None),
                            rr_run_id=getattr(got["runs"].get("tcp_rr"), "id", None),
                            validity=worst, verdict=v, verdict_reason=why))  # type: ignore[arg-type]
    measured = [c for c in out if c.mbps is not None]
    slowest = min(measured, key=lambda c: c.mbps or 0.0, default=None)
    per_host: dict[int, list[float]] = {}
    for c in measured:
        for h in (c.server_host_id, c.client_host_id):
            if h != mesh.server_host_id:  # many to one: the server is on every link
                per_host.setdefault(h, []).append(c.mbps or 0.0)
    means = sorted((statistics.fmean(v), h) for h, v in per_host.items())
    # none when the lowest mean is shared (two hosts whose links are the same ones: a pair both ways)
    slow_host = (means[0][1], means[0][0]) if means and (len(means) == 1 or means[1][0] > means[0][0]) else None
    aggregate = overlap = None
    if mesh.mode == "many_to_one" and measured:
        aggregate = sum(c.mbps or 0.0 for c in measured)
        for c in measured:
            c.share = (c.mbps or 0.0) / aggregate if aggregate > 0 else None
        streams = [got["runs"]["tcp_stream"] for got in cells.values() if "tcp_stream" in got["runs"]]
        starts = [r.started_at for r in streams if r.started_at]
        ends = [r.finished_at for r in streams if r.finished_at]
        if len(starts) == len(ends) == len(streams) and streams:
            overlap = max(0.0, (min(ends) - max(starts)).total_seconds())
    statuses = [r.status for r, _, _ in rows]
    return MeshPublic(
        id=mesh.id, created_at=mesh.created_at, created_by=mesh.created_by, mode=mesh.mode,  # type: ignore[arg-type]
        hosts=[MeshHost(id=h, name=names.get(h, "?")) for h in mesh.host_ids],
        server=MeshHost(id=mesh.server_host_id, name=names.get(mesh.server_host_id, "?")) if mesh.server_host_id
        else None,
        ops=mesh.ops, params=mesh.params, rounds=mesh.rounds, status=_status(mesh, statuses),
        runs={s: statuses.count(s) for s in sorted(set(statuses))}, wall_s=_wall(rows), cells=out,
        slowest_link=MeshLink(server_host_id=slowest.server_host_id, client_host_id=slowest.client_host_id,
                              mbps=slowest.mbps or 0.0) if slowest else None,
        slowest_host=MeshSlowHost(host_id=slow_host[0], name=names.get(slow_host[0], "?"),
                                  mean_mbps=slow_host[1]) if slow_host else None,
        aggregate_mbps=aggregate, overlap_s=overlap)


def _status(mesh: Mesh, statuses: list[str]) -> MeshStatus:
    if any(s in ACTIVE for s in statuses):
        if mesh.cancelled_by:
            return "cancelled"
        return "running" if any(s != RunStatus.queued for s in statuses) else RunStatus.queued
    return "cancelled" if mesh.cancelled_by else "done"


def _wall(rows: list[tuple[Run, Job, int]]) -> float | None:
    starts = [r.started_at for r, _, _ in rows if r.started_at is not None]
    if not starts:
        return None
    ends: list[datetime] = [r.finished_at for r, _, _ in rows if r.finished_at is not None]
    done = all(r.status not in ACTIVE for r, _, _ in rows)
    end = max(ends) if done and ends else utcnow()
    return (end - min(starts)).total_seconds()


CSV_FIELDS = ("server_host_id", "server", "client_host_id", "client", "round", "status", "mbps", "rtt_us", "share",
              "validity", "verdict", "verdict_reason", "stream_run_id", "rr_run_id")


def to_csv(m: MeshPublic) -> str:
    """One line per link; every cell defused against spreadsheet formulas (app/core/csvcell.py)."""
    names = {h.id: h.name for h in [*m.hosts, *([m.server] if m.server else [])]}
    w = Writer()
    w.writerow(list(CSV_FIELDS))
    for c in m.cells:
        row = c.model_dump() | {"server": names.get(c.server_host_id, ""), "client": names.get(c.client_host_id, "")}
        w.writerow([row.get(k) for k in CSV_FIELDS])
    return w.getvalue()
