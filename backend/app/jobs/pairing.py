"""Two-host jobs, in one place: an experiment with the roles serve and drive (the experiment table's network_pair)
is a serve run on host_ids[0] and a drive run on host_ids[1] (`add_pair`). A run's role is read from the table
(ROLE_OF), never from its name. The serve run is dispatched as any run; its kernel binds a port and the runner
reports it (`take_port`, from POST /api/runner/runs/{id}/listening). Only then is the drive run dispatched (`wait`,
which also holds a host for a drive run whose server is up) and, at its claim, handed its peer's address and
ports from the server's own records (`hand_out`). The two end together (`partner_end`, called by
app.jobs.service.finish_run).

Many to one (app.mesh): one serve run and several drive runs in one job, each drive run naming the serve run. The
serve run starts only when every driver can start, all drivers are rung when it listens, and it ends with the last
of them. A mesh's jobs run in rounds: a run of a later round waits (app.jobs.rounds.later_round)."""
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session, aliased

from app.core.errors import Conflict, Unprocessable
from app.experiments.registry import ROLE_OF, RUNS, Experiment
from app.hosts.models import Host
from app.hosts.service import is_online
from app.jobs import rounds, turns
from app.jobs.models import ON_HOST, TERMINAL, WITH_RESULT, Job, Run, RunStatus

DRIVES = tuple(kind for kind, role in ROLE_OF.items() if role == "drive")
SERVES = tuple(kind for kind, role in ROLE_OF.items() if role == "serve")
PAIRED = DRIVES + SERVES


def role(run: Run) -> str | None:
    """serve, drive (a two-host job's runs), host, or None for a kind this server does not know."""
    return ROLE_OF.get(run.experiment)


def add_pair(session: Session, job: Job, e: Experiment, host_ids: list[int], params: dict, expected_s: float) -> None:
    """One serve run on host_ids[0], one drive run on host_ids[1] (many to one: on each host after the first). A
    drive run is not dispatched until the
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
    for host_id in host_ids[1:]:
        session.add(Run(job_id=job.id, host_id=host_id, experiment=drive_kind,
                        params={**params, "server_run_id": serve.id}, expected_duration_s=expected_s))


def serve_run_of(session: Session, drive: Run, *, for_update: bool = False) -> Run | None:
    server_run_id = (drive.params or {}).get("server_run_id")
    if role(drive) != "drive" or not isinstance(server_run_id, int):
        return None
    q = select(Run).where(Run.id == server_run_id, Run.job_id == drive.job_id)
    return session.scalar(q.with_for_update() if for_update else q)


def drive_runs_of(session: Session, serve: Run, *, for_update: bool = False) -> list[Run]:
    """The drive runs of a serve run's job: one, or several (many to one)."""
    q = select(Run).where(Run.job_id == serve.job_id, Run.experiment.in_(DRIVES)).order_by(Run.id)
    return list(session.scalars(q.with_for_update() if for_update else q))


def serve_ready(serve: Run | None) -> bool:
    """A drive run may be handed out once its server is up and said which port it listens on."""
    return serve is not None and serve.status in ON_HOST and serve.listen_port is not None


def wait(session: Session, run: Run) -> Literal["skip", "hold"] | None:
    """Whether a queued run must wait before it is dispatched: None, it may go (a run of one host; a serve run whose
    driver can start as soon as it listens; a drive run whose server reported its port).

    A serve run waits ("skip") while its drive run's host is busy or has a run of one host queued ahead of the drive
    run: started then, it would serve an idle port until its deadline and fail the pair (a full suite on one host
    with a peer found it: the peer's serve runs started at once, the driving host was busy with the suite's CPU
    and memory runs for longer than the serve run's deadline).

    A drive run waits until its server reported its port (the doorbell rung then, and the reconciler, re-check).
    While its server is up, or queued on an online host that is idle (the serve run goes next: its doorbell is
    rung when this host ends a run), its own host is *held* for it ("hold": it starts nothing else). Otherwise a
    serve run could start there and wait for a driver on the other, serving host, and the two would wait for each
    other until their deadlines (crossing pairs, A serves B while B serves A), or this host would keep taking later
    runs and the pair would never find it idle (docs/reliability.md, rule 8). A drive run whose server cannot start
    yet holds nothing ("skip": the host's next queued run may go)."""
    if rounds.later_round(session, run):
        return "skip"  # a mesh's later round: its earlier rounds have runs queued or running
    if turns.waits(session, run):
        return "skip"  # a suite run's host whose machine's hosts ahead of it are still measuring
    if role(run) == "serve":
        return None if driver_can_start(session, run) else "skip"
    if role(run) != "drive":
        return None
    serve = serve_run_of(session, run)
    if serve_ready(serve):
        return None
    if serve is not None and serve.status in ON_HOST:
        return "hold"
    if serve is not None and serve.status == RunStatus.queued and _idle_and_online(session, serve.host_id):
        return "hold"
    return "skip"


def host_busy(session: Session, host_id: int) -> bool:
    """Whether the host runs a benchmark now (a run dispatched or running: one benchmark per host)."""
    busy = select(Run.id).where(Run.host_id == host_id, Run.status.in_(ON_HOST)).limit(1)
    return session.scalar(busy) is not None


def _idle_and_online(session: Session, host_id: int) -> bool:
    host = session.get(Host, host_id)
    return host is not None and is_online(host) and not host_busy(session, host_id)


def driver_can_start(session: Session, serve: Run) -> bool:
    """Whether every queued drive run of this serve run would be the next to start on its host: that host runs
    nothing now and has no run of one host queued ahead of it (two-host runs ahead wait for their own partners).
    A drive run that is not queued has nothing to wait for (its end ends this run too: partner_end)."""
    for drive in drive_runs_of(session, serve):
        if drive.status != RunStatus.queued:
            continue
        if host_busy(session, drive.host_id):
            return False
        ahead = select(Run.id).where(Run.host_id == drive.host_id, Run.status == RunStatus.queued,
                                     Run.id < drive.id, Run.experiment.not_in(PAIRED)).limit(1)
        if session.scalar(ahead) is not None:
            return False
    return True


def serve_hosts_waiting_on(session: Session, host_id: int) -> list[int]:
    """The hosts of queued serve runs whose drive run is on `host_id`: their doorbells are rung when this host ends
    a run (it may now be idle, and their serve runs may go)."""
    drive = aliased(Run)
    q = (select(Run.host_id).join(drive, drive.job_id == Run.job_id)
         .where(Run.status == RunStatus.queued, Run.experiment.in_(SERVES), drive.experiment.in_(DRIVES),
                drive.host_id == host_id, drive.status == RunStatus.queued).distinct())
    return list(session.scalars(q))


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
    drive run's claim. The caller commits, then rings the hosts of `driving_hosts`."""
    if role(run) != "serve":
        raise Unprocessable(f"run {run.id} is a {run.experiment} run; only a serving run reports a port")
    if run.status not in ON_HOST or run.cancel_requested:
        raise Conflict(f"run {run.id} is {run.status}: {run.status_reason or 'stop'}")
    run.listen_port = port
    run.reference_ports = reference_ports


def driving_hosts(session: Session, serve: Run) -> list[int]:
    """The hosts whose drive runs wait on this serve run (their doorbells are rung once the port is known)."""
    hosts = [drive.host_id for drive in drive_runs_of(session, serve)]
    session.rollback()
    return hosts


def partner_end(session: Session, run: Run) -> list[tuple[Run, str, str]]:
    """A two-host job ends together: the drive run's end ends its serve run (the serving runner's next
    lease renewal gets 409 and stops its server) once no other drive run of it is still on (many to one); a serve
    run that ends first fails its drive runs. Returns each partner (row locked) with the status and reason to end
    it with; none when the run is not paired or its partners have ended already."""
    if role(run) not in ("serve", "drive"):
        return []
    if role(run) == "drive":
        partner = serve_run_of(session, run, for_update=True)
        if partner is None or partner.status in TERMINAL:
            session.rollback()
            return []
        others = [d for d in drive_runs_of(session, partner) if d.id != run.id and d.status not in TERMINAL]
        if others:  # many to one: the server serves the drivers still measuring
            session.rollback()
            return []
        if run.status in WITH_RESULT:
            status, reason = RunStatus.succeeded, f"served run {run.id}"
        elif run.status == RunStatus.cancelled:
            status, reason = RunStatus.cancelled, f"the driving run {run.id} was cancelled"
        else:
            status = RunStatus.failed
            reason = f"the driving run {run.id} failed: {run.status_reason or 'no reason given'}"
        return [(partner, status, reason[:2000])]
    drives = [d for d in drive_runs_of(session, run, for_update=True) if d.status not in TERMINAL]
    if not drives:
        session.rollback()
        return []
    reason = (f"the serving run {run.id} ended ({run.status}) before this run: "
              f"{run.status_reason or 'no reason given'}")
    return [(d, RunStatus.failed, reason[:2000]) for d in drives]
