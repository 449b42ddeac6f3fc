from app.core.db import get_sessionmaker
from app.jobs import dispatch
from app.jobs.doorbell import DISPATCH_HOST
from app.worker import retention
from app.worker.celery_app import celery_app


@celery_app.task(name=DISPATCH_HOST)
def dispatch_host(host_id: int) -> None:
    with get_sessionmaker()() as session:
        dispatch.dispatch_host(session, host_id)


@celery_app.task(name="hostbench.reconcile")
def reconcile() -> dict[str, int] | None:
    """Beat's periodic task: a reconciler pass (unless one just ran elsewhere), and the "beat" mark that tells
    /api/health beat and a worker are alive."""
    with get_sessionmaker()() as session:
        dispatch.mark(session, "beat")
    return dispatch.reconcile_exclusive()


@celery_app.task(name="hostbench.prune_samples")
def prune_samples() -> int:
    with get_sessionmaker()() as session:
        return retention.prune_samples(session)
