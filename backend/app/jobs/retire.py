"""Taking a host out of the fleet: revoke its runner, delete it (with or without the runs it measured). Runs still
active on it end with the reason, so no host or job waits on a runner that will never call again. Here, above
app.hosts (whose admin module revokes the credential), because ending and deleting runs is the jobs' business."""
from sqlalchemy import delete, exists, select
from sqlalchemy.orm import Session

from app.core.db import utcnow
from app.hosts import admin
from app.hosts.models import Host
from app.jobs.models import ACTIVE, Job, Run, RunStatus
from app.jobs.service import finish_run


def _end_active_runs(session: Session, host: Host, reason: str) -> list[int]:
    ended = []
    for run in session.scalars(select(Run).where(Run.host_id == host.id, Run.status.in_(ACTIVE))
                               .order_by(Run.id).with_for_update()).all():
        if run.status not in ACTIVE:  # a partner's end may have ended it meanwhile
            continue
        finish_run(session, run, RunStatus.failed, reason)
        ended.append(run.id)
    return ended


def revoke(session: Session, host: Host, by: str) -> list[int]:
    """The runner's next call gets 401 and it stops (killing its kernel); its active runs fail now."""
    admin.revoke_credential(session, host)
    return _end_active_runs(session, host, f"the runner's credential was revoked by {by}")


def delete_host(session: Session, host: Host, by: str, keep_history: bool) -> None:
    revoke(session, host, by)
    if keep_history:
        host.deleted_at = utcnow()
        session.commit()
        return
    job_ids = list(session.scalars(select(Run.job_id).where(Run.host_id == host.id).distinct()))
    session.execute(delete(Run).where(Run.host_id == host.id))  # samples go with them (ON DELETE CASCADE)
    if job_ids:  # a job left without runs is nothing; a two-host job keeps its other host's run
        session.execute(delete(Job).where(Job.id.in_(job_ids), ~exists().where(Run.job_id == Job.id)))
    session.delete(host)
    session.commit()
