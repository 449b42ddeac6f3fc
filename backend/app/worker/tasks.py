import functools
import logging
from collections.abc import Callable
from dataclasses import asdict
from typing import Any, ParamSpec, TypeVar

from sqlalchemy.exc import InterfaceError, OperationalError

from app.checks import service as checks
from app.core.config import get_settings
from app.core.db import get_sessionmaker
from app.hosts.service import RECOMPUTE_RESULTS
from app.jobs import dispatch, partitions, stored
from app.jobs.doorbell import DISPATCH_HOST
from app.schedules import service as schedules
from app.trends import evaluator, notify
from app.worker import retention
from app.worker.celery_app import celery_app

log = logging.getLogger("hostbench.worker")
P = ParamSpec("P")
R = TypeVar("R")


def _skips_while_the_database_is_down(task: Callable[P, R]) -> Callable[P, R | None]:
    """A periodic task that finds PostgreSQL unreachable skips its turn with one line in the log, not a traceback
    every period of an outage (the next period, or the reconciler, does the work once it is back)."""

    @functools.wraps(task)
    def run(*args: P.args, **kwargs: P.kwargs) -> R | None:
        try:
            return task(*args, **kwargs)
        except (OperationalError, InterfaceError) as exc:
            cause = exc.orig or exc
            lines = str(cause).strip().splitlines()
            log.warning("%s skipped: the database is unavailable (%s: %s)", task.__name__, type(cause).__name__,
                        lines[0][:200] if lines else "")
            return None

    return run


@celery_app.task(name=DISPATCH_HOST)
@_skips_while_the_database_is_down
def dispatch_host(host_id: int) -> None:
    with get_sessionmaker()() as session:
        dispatch.dispatch_host(session, host_id)


@celery_app.task(name="hostbench.reconcile")
@_skips_while_the_database_is_down
def reconcile() -> dict[str, int] | None:
    """Beat's periodic task: a reconciler pass (unless one just ran elsewhere), and the "beat" mark that tells
    /api/health beat and a worker are alive."""
    with get_sessionmaker()() as session:
        dispatch.mark(session, "beat")
    return dispatch.reconcile_exclusive()


@celery_app.task(name="hostbench.prune_samples")
@_skips_while_the_database_is_down
def prune_samples() -> dict[str, Any] | None:
    with get_sessionmaker()() as session:
        return asdict(retention.prune_samples(session))


@celery_app.task(name="hostbench.sample_partitions")
@_skips_while_the_database_is_down
def sample_partitions() -> list[str] | None:
    """Beat's periodic task: the sample table's partitions for this month and the next ones (app.jobs.partitions);
    the names of those it created."""
    with get_sessionmaker()() as session:
        return partitions.ensure_ahead(session)


@celery_app.task(name=RECOMPUTE_RESULTS)
@_skips_while_the_database_is_down
def recompute_results(host_id: int | None = None) -> int | None:
    """Recompute the stored results whose inputs changed (one host's, after a peak change; every host's from beat's
    sweep) within a time budget; rings itself again while some are left (app.jobs.stored.recompute_stale)."""
    with get_sessionmaker()() as session:
        done, left = stored.recompute_stale(session, host_id)
    if left:
        recompute_results.delay(host_id)
    return done


@celery_app.task(name="hostbench.trends.evaluate")
@_skips_while_the_database_is_down
def evaluate_trends() -> int | None:
    """Beat's periodic task: newly finished runs against thresholds and the change detector (app.trends.evaluator);
    each event's notifications go out from notify_trend_event, so a slow webhook never holds this pass up."""
    with get_sessionmaker()() as session:
        ids = evaluator.evaluate_pending(session)
    for event_id in ids:
        notify_trend_event.delay(event_id)
    return len(ids)


@celery_app.task(name="hostbench.schedules.fire")
@_skips_while_the_database_is_down
def fire_schedules() -> int | None:
    """Beat's periodic task: every due schedule fired once (app.schedules.service.fire_due); how many fired."""
    with get_sessionmaker()() as session:
        return schedules.fire_due(session)


@celery_app.task(name="hostbench.checks.judge")
@_skips_while_the_database_is_down
def judge_checks() -> int | None:
    """Beat's periodic task: health checks whose suite runs ended are judged, once each, and the webhooks of hosts
    whose verdict changed are sent (app.checks.service); how many checks were judged."""
    with get_sessionmaker()() as session:
        judged = checks.judge_pending(session)
        checks.deliver_webhooks(session)
        return len(judged)


@celery_app.task(name="hostbench.trends.notify", bind=True)
def notify_trend_event(self, event_id: int) -> None:  # type: ignore[no-untyped-def]
    """POST the event to the webhook and e-mail it (app.trends.notify); a failure worth retrying (a timeout, a 5xx)
    is retried with a growing delay, webhook_retries times, then recorded as failed."""
    retries = get_settings().webhook_retries
    with get_sessionmaker()() as session:
        again = notify.deliver(session, event_id, final=self.request.retries >= retries)
    if again:
        raise self.retry(countdown=min(300, 2 * 3 ** self.request.retries), max_retries=retries)
