"""What `celery -A app.worker.celery_app worker|beat` loads: the one Celery application (app.core.celery_app), with
the tasks a worker imports and beat's schedule."""
from app.core.celery_app import celery_app
from app.core.config import get_settings
from app.hosts.service import RECOMPUTE_RESULTS

__all__ = ["celery_app"]

celery_app.conf.update(
    include=["app.worker.tasks"],
    beat_schedule={"reconcile": {"task": "hostbench.reconcile", "schedule": get_settings().reconcile_s},
                   # stored results whose host's peaks changed, or stored before results were (app.jobs.stored):
                   # a sweep after a lost message or a restart; a peak change rings the task at once
                   "recompute_results": {"task": RECOMPUTE_RESULTS, "schedule": 300.0},
                   # sample retention (app.worker.retention): hourly, a bounded number of batches per call
                   "prune_samples": {"task": "hostbench.prune_samples", "schedule": 3600.0},
                   # the sample table's monthly partitions, created months ahead (app.jobs.partitions)
                   "sample_partitions": {"task": "hostbench.sample_partitions", "schedule": 3600.0},
                   # trends (app.trends.evaluator): newly finished runs against thresholds and the change detector
                   "evaluate_trends": {"task": "hostbench.trends.evaluate",
                                       "schedule": get_settings().trends_evaluate_s},
                   # schedules (app.schedules.service): fire the due ones, each once, under a row lock
                   "fire_schedules": {"task": "hostbench.schedules.fire",
                                      "schedule": get_settings().schedules_fire_s},
                   # health checks (app.checks.service): judge the ended ones, send verdict-change webhooks
                   "judge_checks": {"task": "hostbench.checks.judge", "schedule": get_settings().schedules_fire_s}},
)
