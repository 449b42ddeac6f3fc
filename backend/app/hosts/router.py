from fastapi import APIRouter

from app.core.deps import SessionDep
from app.hosts import service
from app.hosts.schemas import HostLabelsUpdate, HostPublic, HostsPublic, PeakKey, PeakOverride

router = APIRouter(prefix="/api/hosts", tags=["hosts"])


@router.get("", response_model=HostsPublic)
def read_hosts(session: SessionDep) -> HostsPublic:
    hosts = service.list_hosts(session)
    return HostsPublic(data=[service.to_public(h) for h in hosts], count=len(hosts))


@router.get("/{host_id}", response_model=HostPublic)
def read_host(host_id: int, session: SessionDep) -> HostPublic:
    return service.to_public(service.get_host(session, host_id))


@router.patch("/{host_id}/labels", response_model=HostPublic)
def update_labels(host_id: int, body: HostLabelsUpdate, session: SessionDep) -> HostPublic:
    host = service.get_host(session, host_id)
    host.labels = {**(host.labels or {}), **body.model_dump(exclude_unset=True)}
    session.commit()
    return service.to_public(host)


@router.put("/{host_id}/peaks/{key}", response_model=HostPublic)
def override_peak(host_id: int, key: PeakKey, body: PeakOverride, session: SessionDep) -> HostPublic:
    """A peak entered by a person (from a datasheet, say) replaces the computed one for later runs."""
    host = service.get_host(session, host_id)
    service.set_peak_override(session, host, key, body.value, body.note)
    return service.to_public(host)


@router.delete("/{host_id}/peaks/{key}", response_model=HostPublic)
def clear_peak_override(host_id: int, key: PeakKey, session: SessionDep) -> HostPublic:
    host = service.get_host(session, host_id)
    service.set_peak_override(session, host, key, None, None)
    return service.to_public(host)
