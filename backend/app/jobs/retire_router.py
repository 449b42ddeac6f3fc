"""The routes that take a host out of the fleet (app.jobs.retire): under /api/hosts with the hosts' other routes
(app.hosts.router, included just before this one), here because they end and delete runs."""
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response

from app.audit.service import record
from app.core.bounds import Id
from app.core.deps import SessionDep
from app.hosts import service
from app.hosts.schemas import HostPublic
from app.jobs import retire
from app.users.auth import AdminDep

router = APIRouter(prefix="/api/hosts", tags=["hosts"])


@router.post("/{host_id:int}/revoke", response_model=HostPublic)
def revoke_host(host_id: Id, p: AdminDep, session: SessionDep) -> HostPublic:
    host = service.get_host(session, host_id)
    record(session, p.name, "host.revoke", f"host {host.name}")
    ended = retire.revoke(session, host, p.name)
    if ended:
        record(session, p.name, "host.revoke.runs_failed", f"host {host.name}", runs=ended)
        session.commit()
    return service.to_public(host)


@router.delete("/{host_id:int}", status_code=204)
def delete_host(host_id: Id, p: AdminDep, session: SessionDep,
                history: Annotated[Literal["keep", "delete"], Query(description="keep or delete its runs")] = "keep",
                ) -> Response:
    host = service.get_host(session, host_id)
    record(session, p.name, "host.delete", f"host {host.name}", history=history)
    session.commit()
    retire.delete_host(session, host, p.name, keep_history=history == "keep")
    return Response(status_code=204)
