"""The Celery application as every process that sends a task needs it: the broker and how to talk to it.

Celery is the doorbell, not the ledger: tasks take ids, re-read PostgreSQL, finish in milliseconds. A process
rings by task name (app.jobs.doorbell), so nothing that rings imports the worker; the tasks, their schedule and
what a worker imports are app.worker's (app/worker/celery_app.py, the module `celery -A` names)."""
from celery import Celery

from app.core.config import get_settings

VISIBILITY_TIMEOUT_S = 3600  # far above any task's time limit (tasks take milliseconds; limit 60 s)

celery_app = Celery("hostbench", broker=get_settings().redis_url)
celery_app.conf.update(
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_ignore_result=True,
    task_time_limit=60,
    task_soft_time_limit=50,
    # a hung Redis (SIGSTOP, a stalled disk) answers nothing: a publish gives up after socket_timeout instead of
    # blocking its thread for as long as the hang lasts (above the worker's 1-s BRPOP wait)
    broker_transport_options={"visibility_timeout": VISIBILITY_TIMEOUT_S, "socket_timeout": 5,
                              "socket_connect_timeout": 5},
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=False,
    timezone="UTC",
)
