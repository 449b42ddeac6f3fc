"""The host's side of taking it out of the fleet: revoke its runner's credential, rotate it. Ending the runs still
active on a revoked or deleted host is the jobs' side (app.jobs.retire), which calls this."""
from sqlalchemy.orm import Session

from app.core.db import utcnow
from app.core.errors import Conflict
from app.hosts.models import Host


def revoke_credential(session: Session, host: Host) -> None:
    """The runner's next call gets 401 and it stops (killing its kernel)."""
    if host.revoked_at is None:
        host.revoked_at = utcnow()
        host.next_token_hash = None
        host.rotate_requested_at = None
        session.commit()


def request_rotation(session: Session, host: Host) -> None:
    if host.revoked_at is not None:
        raise Conflict(f"host {host.name} is revoked; a revoked runner cannot rotate its credential")
    host.rotate_requested_at = utcnow()
    session.commit()
