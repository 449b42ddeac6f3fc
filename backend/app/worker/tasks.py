from app.core.db import get_sessionmaker
from app.jobs import dispatch
from app.worker import retention
from app.worker.celery_app import celery_app


@celery_app.task(name="hostbench.dispatch_host")
def dispatch_host(host_id: int) -> None:
    with get_sessionmaker()() as session:
        dispatch.dispatch_host(session, host_id)


@celery_app.task(name="hostbench.reconcile")
def reconcile() -> dict[str, int] | None:
    return dispatch.reconcile_exclusive()


@celery_app.task(name="hostbench.prune_samples")
def prune_samples() -> int:
    with get_sessionmaker()() as session:
        return retention.prune_samples(session)


def ring(host_id: int) -> None:
    """Enqueue after the commit. If Redis is down the reconciler picks the run up later."""
    try:
        dispatch_host.apply_async((host_id,), retry=False)
    except Exception:  # noqa: BLE001 - the broker being down must not fail a request whose rows are committed
        import logging

        logging.getLogger("hostbench").warning("could not enqueue dispatch for host %s; reconciler will", host_id)
