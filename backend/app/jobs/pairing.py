"""Two-host jobs, in one place: an experiment with the roles serve and drive (the experiment table's network_pair)
is a serve run on host_ids[0] and a drive run on host_ids[1] (`add_pair`). A run's role is read from the table
(ROLE_OF), never from its name. The serve run is dispatched as any run; its kernel binds a port and the runner
reports it (`take_port`, from POST /api/runner/runs/{id}/listening). Only then is the drive run dispatched (`wait`,
which also holds a host for a drive run whose server is up) and, at its claim, handed its peer's address and
ports from the server's own records (`hand_out`). The two end together (`partner_end`, called by
app.jobs.service.finish_run)."""
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.errors import Conflict, Unprocessable
from app.experiments.registry import ROLE_OF, RUNS, Experiment
from app.hosts.models import Host
from app.jobs.models import TERMINAL, Job, Run

DRIVES = tuple(kind for kind, role in ROLE_OF.items() if role == "drive")


def role(run: Run) -> str | None:
    """serve, drive (a two-host job's runs), host, or None for a kind this server does not know."""
    return ROLE_OF.get(run.experiment)


def add_pair(session: Session, job: Job, e: Experiment, host_ids: list[int], params: dict, expected_s: float) -> None:
    """One serve run on host_ids[0], one drive run on host_ids[1]. The drive run is not dispatched until the
    serve run reported its port; its peer address and ports are added at claim time, by the server. With
    reference tools, the serve run starts reference servers too and the drive run gets their ports at claim."""
    serve_kind, drive_kind = e.run_kind("serve"), e.run_kind("drive")
    serve_params = {p.name: params[p.name] for p in RUNS[serve_kind].job_params() if p.name in params}
    if params.get("reference"):
        serve_params["reference"] = True
    serve = Run(job_id=job.id, host_id=host_ids[0], experiment=serve_kind, params=serve_params,
                expected_duration_s=expected_s)
    session.add(serve)
    session.flush()
    session.add(Run(job_id=job.id, host_id=host_ids[1], experiment=drive_kind,
                    params={**params, "server_run_id": serve.id}, expected_duration_s=expected_s))


def serve_run_of(session: Session, drive: Run, *, for_update: bool = False) -> Run | None:
    server_run_id = (drive.params or {}).get("server_run_id")
    if role(drive) != "drive" or not isinstance(server_run_id, int):
        return None
    q = select(Run).where(Run.id == server_run_id, Run.job_id == drive.job_id)
    return session.scalar(q.with_for_update() if for_update else q)


def drive_run_of(session: Session, serve: Run, *, for_update: bool = False) -> Run | None:
    q = select(Run).where(Run.job_id == serve.job_id, Run.experiment.in_(DRIVES))
    return session.scalar(q.with_for_update() if for_update else q)


def serve_ready(serve: Run | None) -> bool:
    """A drive run may be handed out once its server is up and said which port it listens on."""
    return serve is not None and serve.status in ("dispatched", "running") and serve.listen_port is not None


def wait(session: Session, run: Run) -> Literal["skip", "hold"] | None:
    """Whether a queued run must wait before it is dispatched: None, it may go (any run but a drive run, and a drive
    run whose server reported its port). A drive run waits until then (the reconciler and the doorbell rung once
    the port is known re-check). While it waits for a server that is already up on another host, its own host is
    *held* for it ("hold": it starts nothing else): started, a serve run there could wait for a driver on that
    other, serving host, and the two would wait for each other until their deadlines (crossing pairs, A serves B
    while B serves A; docs/reliability.md, rule 8). A drive run whose server has not started yet holds nothing
    ("skip": the host's next queued run may go)."""
    if role(run) != "drive":
        return None
    serve = serve_run_of(session, run)
    if serve_ready(serve):
        return None
    return "hold" if serve is not None and serve.status in ("dispatched", "running") else "skip"


def hand_out(session: Session, run: Run) -> str | None:
    """At the claim: a drive run gets its peer's address and ports, from the server's own records, never from a
    request (kept in its params: shown with the run, where it drove to); a serve run's new attempt binds a new
    port. Returns why a drive run cannot start (the caller fails it), None when it can."""
    if role(run) == "drive":
        serve = serve_run_of(session, run)
        peer = session.scalar(select(Host.address).where(Host.id == serve.host_id)) if serve is not None else None
        if not serve_ready(serve):
            return "its serving run is not listening"
        if not peer:
            return "the serving host's address is unknown"
        assert serve is not None
        params = {**run.params, "peer": peer, "port": serve.listen_port}
        if run.params.get("reference"):
            params["reference_ports"] = dict(serve.reference_ports or {})
        run.params = params
    elif role(run) == "serve":
        run.listen_port = None  # a new attempt binds a new port
        run.reference_ports = None
    return None


def take_port(run: Run, port: int, reference_ports: dict[str, int] | None) -> None:
    """A serve run's kernel listens on `port` (and its reference servers on theirs, tool -> port): keep them for the
    drive run's claim. The caller commits, then rings the host of `driving_host`."""
    if role(run) != "serve":
        raise Unprocessable(f"run {run.id} is a {run.experiment} run; only a serving run reports a port")
    if run.status not in ("dispatched", "running") or run.cancel_requested:
        raise Conflict(f"run {run.id} is {run.status}: {run.status_reason or 'stop'}")
    run.listen_port = port
    run.reference_ports = reference_ports


def driving_host(session: Session, serve: Run) -> int | None:
    """The host whose drive run waits on this serve run (its doorbell is rung once the port is known)."""
    drive = drive_run_of(session, serve)
    session.rollback()
    return drive.host_id if drive is not None else None


def partner_end(session: Session, run: Run) -> tuple[Run, str, str] | None:
    """A two-host job ends together: the drive run's end ends its serve run (the serving runner's next
    lease renewal gets 409 and stops its server); a serve run that ends first fails its drive run. Returns the
    partner (row locked) with the status and reason to end it with, or None (the run is not paired, or its
    partner has ended already)."""
    if role(run) not in ("serve", "drive"):
        return None
    if role(run) == "drive":
        partner = serve_run_of(session, run, for_update=True)
        if partner is None or partner.status in TERMINAL:
            session.rollback()
            return None
        if run.status in ("succeeded", "untrusted"):
            status, reason = "succeeded", f"served run {run.id}"
        elif run.status == "cancelled":
            status, reason = "cancelled", f"the driving run {run.id} was cancelled"
        else:
            status, reason = "failed", f"the driving run {run.id} failed: {run.status_reason or 'no reason given'}"
    else:
        partner = drive_run_of(session, run, for_update=True)
        if partner is None or partner.status in TERMINAL:
            session.rollback()
            return None
        status = "failed"
        reason = (f"the serving run {run.id} ended ({run.status}) before this run: "
                  f"{run.status_reason or 'no reason given'}")
    return partner, status, reason[:2000]
