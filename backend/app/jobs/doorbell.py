"""The doorbell: after a commit, ask a Celery worker to hand a host's next run to its runner
(app.worker.tasks.dispatch_host, which runs app.jobs.dispatch.dispatch_host). The task is sent by name, so what
rings (job creation, a two-host job's end, a serve run's port, a run's finish) does not import the worker, which
imports them: no import loop."""
from app.core.broker import later

DISPATCH_HOST = "hostbench.dispatch_host"


def ring(host_id: int) -> None:
    """Enqueue the dispatch after the commit, on the broker's sender thread (app.core.broker.later): creating a
    job never waits on Redis. If Redis is down or hung the message is lost and the reconciler rings instead."""
    from app.core.celery_app import celery_app  # here: Celery (with kombu, yaml, click) is not the API's import cost

    later(lambda: celery_app.send_task(DISPATCH_HOST, (host_id,), retry=False))
