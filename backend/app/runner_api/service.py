"""What runners may do to runs. Every write carries (run_id, attempt); a stale attempt is refused (409)."""
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.config import get_settings
from app.core.db import utcnow
from app.core.errors import Conflict, NotFound
from app.experiments.registry import RUNS
from app.hosts.models import Host
from app.jobs import pairing, stored
from app.jobs.models import ON_HOST, TERMINAL, Run, RunStatus
from app.jobs.samples import measured
from app.jobs.service import deadline_s, finish_run, publish_run
from app.results.checks import pair_check
from app.results.schemas import PairCheck
from app.results.service import compute_result, phase_cpu_share, trace_summary, with_verdict
from app.runner_api.schemas import Assignment, RunFinish

# A runner's every call says it is alive, but online/offline is judged over tens of seconds: the host row is
# written at most this often by the calls of a running benchmark (uploads, lease renewals), instead of an UPDATE
# of the hosts table beside every batch of samples (200 a second with a fleet of 200 running; issue 11).
SEEN_EVERY_S = 5.0  # well inside runner_online_s (20 s), and a busy runner beats every 5 s anyway


def note_seen(host: Host) -> None:
    """The runner was heard from now (written with the call's commit, unless written within SEEN_EVERY_S)."""
    now = utcnow()
    if host.last_seen_at is None or (now - host.last_seen_at).total_seconds() >= SEEN_EVERY_S:
        host.last_seen_at = now


def touch(session: Session, host: Host, inventory: dict | None = None, version: str | None = None) -> None:
    host.last_seen_at = utcnow()  # a heartbeat: always
    if inventory is not None:
        host.inventory = inventory
    if version:
        host.runner_version = version
    session.commit()


def claim(session: Session, host: Host) -> Assignment | None:
    run = session.scalar(
        select(Run)
        .where(Run.host_id == host.id, Run.status == RunStatus.dispatched)
        .order_by(Run.id)
        .limit(1)
        .with_for_update()
    )
    if run is None:
        session.rollback()
        return None
    if run.cancel_requested:  # never hand out a run someone cancelled: end it as its cancel meant to
        finish_run(session, run, RunStatus.cancelled, f"cancelled by {run.cancelled_by}" if run.cancelled_by
                   else "cancelled by the user")
        return None
    # A runner asks for work only when idle, so a run it claimed before and is asking for again was lost in
    # transit: hand it out under a new attempt; anything still arriving for the old attempt gets 409.
    why = pairing.hand_out(session, run)  # a two-host job's peer address and ports
    if why is not None:
        finish_run(session, run, RunStatus.failed, f"cannot drive: {why}")
        return None
    run.attempt += 1
    run.samples_closed = False  # the new attempt's samples come from now on (app.live.router waits for them)
    run.claimed_at = utcnow()
    run.lease_expires_at = utcnow() + timedelta(seconds=get_settings().lease_s)
    run.inventory_snapshot = host.inventory
    run.labels_snapshot = dict(host.labels or {})
    note_seen(host)
    session.commit()
    return Assignment(run_id=run.id, attempt=run.attempt, experiment=run.experiment, params=run.params,
                      deadline_s=deadline_s(run), lease_s=get_settings().lease_s)


def _owned_run(session: Session, host: Host, run_id: int, attempt: int) -> Run:
    run = session.scalar(select(Run).where(Run.id == run_id).with_for_update())
    if run is None or run.host_id != host.id:
        raise NotFound(f"run {run_id} not found for this runner")
    if attempt != run.attempt:
        raise Conflict(f"attempt {attempt} of run {run_id} is stale (current attempt {run.attempt})")
    return run


def _renew(run: Run) -> None:
    run.lease_expires_at = utcnow() + timedelta(seconds=get_settings().lease_s)


def start(session: Session, host: Host, run_id: int, attempt: int, kernel_info: dict) -> None:
    run = _owned_run(session, host, run_id, attempt)
    if run.status == RunStatus.running:
        session.rollback()
        return
    if run.status != RunStatus.dispatched or run.cancel_requested:
        raise Conflict(f"run {run_id} is {run.status}; do not start it")
    run.status = RunStatus.running
    run.started_at = utcnow()
    run.kernel_info = kernel_info
    clock = kernel_info.get("clock_ghz")
    if isinstance(clock, int | float) and 0.1 < clock < 10:
        host.measured_clock_ghz = float(clock)
    _renew(run)
    note_seen(host)
    session.commit()
    publish_run(session, run)


def check_renewable(run: Run) -> None:
    """A lease is renewed only while its run is on (the renewal itself: app.runner_api.fast.renew_lease)."""
    if run.status not in ON_HOST:
        raise Conflict(f"run {run.id} is {run.status}: {run.status_reason or 'stop'}")


def listening(session: Session, host: Host, run_id: int, attempt: int, port: int,
              reference_ports: dict[str, int] | None = None) -> list[int]:
    """Store the port a serve run's kernel listens on, and those of its reference servers (tool -> port)
    (app.jobs.pairing); returns the hosts to ring (the driving ones)."""
    run = _owned_run(session, host, run_id, attempt)
    pairing.take_port(run, port, reference_ports)
    _renew(run)
    note_seen(host)
    session.commit()
    publish_run(session, run)
    return pairing.driving_hosts(session, run)


def _pair(session: Session, host: Host, run: Run) -> PairCheck | None:
    """A driving run's pair, from the server's records of both hosts: are they one machine?"""
    serve = pairing.serve_run_of(session, run)
    if serve is None:
        return None
    peer = session.get(Host, serve.host_id)
    return pair_check(run.inventory_snapshot or host.inventory or {}, host.address,
                      serve.inventory_snapshot or (peer.inventory if peer is not None else None) or {},
                      peer.address if peer is not None else None, serve.host_id)


def close(session: Session, run: Run) -> None:
    """The attempt has delivered every sample it will send (caller holds the row lock): the live streams waiting
    for it to send `end` hear of it at once."""
    if run.samples_closed:
        session.rollback()
        return
    run.samples_closed = True
    session.commit()
    publish_run(session, run)


def closed(session: Session, host: Host, run_id: int, attempt: int) -> None:
    """`POST /api/runner/runs/{id}/closed`: a runner that sends no finish for an attempt (the server ended the run)
    says, once its spool is empty, that no sample of the attempt will follow. 409 for a stale attempt."""
    close(session, _owned_run(session, host, run_id, attempt))


def finish(session: Session, host: Host, run_id: int, body: RunFinish) -> None:
    run = _owned_run(session, host, run_id, body.attempt)
    if run.status in TERMINAL:  # idempotent: a resent finish, or the server already decided (cancel, lost lease)
        close(session, run)  # the runner sends its finish after its samples: the attempt has no more to send
        return
    run.samples_closed = True
    raw = [r.raw() for r in body.results]
    run.raw_results = raw
    run.references = [r.model_dump() for r in body.references]
    result = None
    if raw:
        result = compute_result(
            run.experiment, run.params, raw, run.kernel_info, run.inventory_snapshot or host.inventory,
            run.references, host.peak_overrides, _pair(session, host, run),
        )
    if run.experiment in RUNS and RUNS[run.experiment].trace and result is not None:
        samples = measured(session, run)
        result.trace = trace_summary([t for t, _ in samples], [v for _, v in samples], phase_cpu_share(raw))
        # the trace's flags enter the stored verdict and headline (trends and the fleet read the stored result)
        result = with_verdict(result)
    if result is not None:
        stored.store(run, result, host)  # computed once, here; reads serve it (app.jobs.stored)
    status, reason = body.status, body.reason
    if status == RunStatus.succeeded and run.result and not all(row["valid"] for row in run.result["rows"]):
        reason = "; ".join(row["invalid_reason"] for row in run.result["rows"] if not row["valid"])
        status = RunStatus.untrusted
    note_seen(host)
    finish_run(session, run, status, reason)
