"""Assigning runs to runners and reaping the ones whose runner went silent. Called by short Celery tasks
(the doorbell) and by the periodic reconciler; every step re-reads PostgreSQL, so a lost or duplicated
Celery message changes nothing."""
import logging
from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from app.core import broker
from app.core.config import get_settings
from app.core.db import get_engine, utcnow
from app.hosts.models import Host
from app.jobs import pairing, refusals
from app.jobs.models import ON_HOST, Run, RunStatus, ServerMark
from app.jobs.service import finish_run, publish_run

log = logging.getLogger("hostbench.dispatch")


DISPATCH_LOCK = 0x6862_6470  # "hbdp"


def dispatch_host(session: Session, host_id: int) -> int | None:
    """Hand the oldest queued run of a host to its runner if the host is idle (one benchmark per host). One
    dispatch at a time over the whole server (a transaction-level advisory lock, milliseconds): whether a host is
    held for a driver depends on another host's run (_next_ready), which a concurrent dispatch could be changing."""
    session.execute(select(func.pg_advisory_xact_lock(DISPATCH_LOCK)))
    host = session.scalar(select(Host).where(Host.id == host_id).with_for_update())
    if host is None:
        session.rollback()
        return None
    run = None if pairing.host_busy(session, host_id) else _next_ready(session, host_id)
    if run is None:
        session.rollback()
        return None
    run.status = RunStatus.dispatched
    run.dispatched_at = utcnow()
    session.commit()
    publish_run(session, run)
    broker.publish(broker.host_work_channel(host_id), {"run_id": run.id})
    log.info("dispatched run %s to host %s", run.id, host_id)
    return run.id


def _next_ready(session: Session, host_id: int) -> Run | None:
    """The oldest queued run of the host that can start now. A two-host drive run waits until its serve run
    reported the port, and may hold its host meanwhile (app.jobs.pairing.wait: crossing pairs, A serves B while B
    serves A; docs/reliability.md, rule 8)."""
    # FOR UPDATE: a cancel that holds a run's row commits first, and PostgreSQL then re-reads the row and leaves
    # it out (no longer queued). Read without the lock, a run cancelled meanwhile was written back as
    # "dispatched" over its cancel, and its runner claimed it, was refused at start and claimed it again, forever
    # (seen: a suite cancelled while its next run was being dispatched).
    for run in session.scalars(
        select(Run).where(Run.host_id == host_id, Run.status == RunStatus.queued).order_by(Run.id).limit(100)
        .with_for_update(of=Run).execution_options(populate_existing=True)
    ):
        wait = pairing.wait(session, run)
        if wait is None:
            return run
        if wait == "hold":
            return None  # held for this driver: its server is up, its port is coming
    return None


def renew_after_gap(session: Session) -> int:
    """Leases cannot have been renewed while the server was not there to take the renewals (PostgreSQL stopped or
    hung, the API cut off from it): a runner that kept measuring through such an outage must not find its run
    failed the moment the database is back. So when the reconciler's last complete pass is more than two periods
    old, every running lease first gets a fresh term; the runners renew within it. Returns the leases renewed."""
    s = get_settings()
    prev = session.scalar(select(ServerMark.at).where(ServerMark.name == "reconciled").with_for_update())
    api = session.scalar(select(ServerMark.at).where(ServerMark.name == "api"))
    now = utcnow()
    renewed = 0
    # No API process has been up (they mark "api" every period, app.reconciler): no runner could renew through one, so
    # none is to blame; its lease is kept until an API is back (the runner's own fence still stops its kernel).
    api_away = api is not None and (now - api).total_seconds() > 1.5 * s.reconcile_s
    if prev is None or (now - prev).total_seconds() > 2 * s.reconcile_s or api_away:
        renewed = len(session.scalars(
            update(Run).where(Run.status.in_(ON_HOST), Run.claimed_at.is_not(None))
            .values(lease_expires_at=func.greatest(Run.lease_expires_at, now + timedelta(seconds=s.lease_s)))
            .returning(Run.id)
        ).all())
        if renewed and api is not None and api_away:
            log.warning("no API process has been up for %.0f s: %d running lease(s) kept for %.0f s, as no runner "
                        "could renew", (now - api).total_seconds(), renewed, s.lease_s)
        elif renewed and prev is not None:
            log.warning("the reconciler last ran %.0f s ago (database, worker or beat unavailable): %d running "
                        "lease(s) renewed for %.0f s so their runners can renew", (now - prev).total_seconds(),
                        renewed, s.lease_s)
    mark(session, "reconciled", now)
    return renewed


def mark(session: Session, name: str, at: datetime | None = None) -> None:
    """Record (and commit) that `name` happened now: "reconciled" (a reconciler pass ran to the end), "beat"
    (Celery beat's reconcile task ran, whether or not it found a pass to do), "api" (an API process is up; each
    marks it every reconcile period). /api/health reads the first two, renew_after_gap the first and the last."""
    at = at or utcnow()
    session.execute(insert(ServerMark).values(name=name, at=at)
                    .on_conflict_do_update(index_elements=["name"], set_={"at": at}))
    session.commit()


RECONCILE_LOCK = 0x6862_7263  # "hbrc": one reconciler pass at a time, whoever runs it


def reconcile_exclusive() -> dict[str, int] | None:
    """One reconciler pass, unless another is running (a PostgreSQL advisory lock) or one finished less than half a
    period ago; None then. Celery beat's task and every API process call this (app.reconciler's reconcile loop), so
    leases are expired and lost doorbells re-rung with beat down too (docs/reliability.md, rule 1)."""
    s = get_settings()
    with get_engine().connect() as conn:
        if not conn.scalar(select(func.pg_try_advisory_lock(RECONCILE_LOCK))):
            conn.rollback()
            return None
        conn.commit()
        try:
            last = conn.scalar(select(ServerMark.at).where(ServerMark.name == "reconciled"))
            conn.commit()
            if last is not None and (utcnow() - last).total_seconds() < s.reconcile_s / 2:
                return None
            with Session(bind=conn, expire_on_commit=False) as session:
                return reconcile(session)
        finally:
            conn.rollback()
            conn.scalar(select(func.pg_advisory_unlock(RECONCILE_LOCK)))
            conn.commit()


def reconcile(session: Session) -> dict[str, int]:
    """Fail runs whose runner went silent; re-dispatch what a lost message left queued."""
    renewed = renew_after_gap(session)
    # a lease never runs out for renewals the server itself refused (app.jobs.refusals)
    renewed += refusals.extend(session)
    now = utcnow()
    s = get_settings()
    failed = 0
    # A lease is lost only if an API process was up when it ran out (its "api" mark is later): a runner cannot be
    # blamed for not renewing through an API that was not there (docs/reliability.md, rule 12).
    api = session.scalar(select(ServerMark.at).where(ServerMark.name == "api"))
    expired_by = now if api is None else min(now, api)
    lost_ids = session.scalars(
        select(Run.id).where(Run.status.in_(ON_HOST), Run.lease_expires_at < expired_by)
    ).all()
    unclaimed_ids = session.scalars(
        select(Run.id).where(
            Run.status == RunStatus.dispatched, Run.claimed_at.is_(None),
            Run.dispatched_at < now - timedelta(seconds=s.claim_timeout_s),
        )
    ).all()
    session.rollback()
    refused = refusals.last(session) if lost_ids else None
    if refused is not None and (utcnow() - refused).total_seconds() < s.lease_s:
        lost_ids = []  # a runner's call was refused since this pass extended the leases: none is judged now
    for run_id in lost_ids:
        run = session.scalar(select(Run).where(Run.id == run_id).with_for_update())
        if run is None or run.status not in ON_HOST or run.lease_expires_at is None \
                or run.lease_expires_at >= min(utcnow(), expired_by):
            session.rollback()
            continue
        silent = (utcnow() - (run.lease_expires_at - timedelta(seconds=s.lease_s))).total_seconds()
        finish_run(session, run, RunStatus.failed,
                   f"runner went silent: no lease renewal for {silent:.0f} s (attempt {run.attempt})")
        failed += 1
    for run_id in unclaimed_ids:
        run = session.scalar(select(Run).where(Run.id == run_id).with_for_update())
        if run is None or run.status != RunStatus.dispatched or run.claimed_at is not None:
            session.rollback()
            continue
        finish_run(session, run, RunStatus.failed,
                   f"no runner claimed the run within {s.claim_timeout_s:.0f} s; is the host's runner running?")
        failed += 1
    waiting = session.scalars(
        select(Run.host_id)
        .where(Run.status == RunStatus.queued, Run.created_at < now - timedelta(seconds=s.redispatch_after))
        .distinct()
    ).all()
    session.rollback()
    dispatched = sum(1 for host_id in waiting if dispatch_host(session, host_id) is not None)
    return {"failed": failed, "dispatched": dispatched, "renewed": renewed}
