from typing import Annotated
from urllib.parse import urlsplit

from fastapi import APIRouter, Query, Request, Response
from pydantic import StringConstraints

from app.audit.service import record
from app.core.bounds import Id
from app.core.config import get_settings
from app.core.db import utcnow
from app.core.deps import SessionDep
from app.core.etag import answer
from app.hosts import admin, enrol, listing, service
from app.hosts.models import RegistrationToken
from app.hosts.schemas import (
    HostLabelsUpdate,
    HostPublic,
    HostsPublic,
    PeakKey,
    PeakOverride,
    RegistrationTokenCreate,
    RegistrationTokenCreated,
    RegistrationTokenPublic,
    RegistrationTokensPublic,
)
from app.users.auth import AdminDep, OperatorDep, ViewerDep

router = APIRouter(prefix="/api/hosts", tags=["hosts"])
# Revoking and deleting a host end its runs: those two routes are app.jobs.retire_router's.


def public_base_url(request: Request) -> str:
    """The URL runners reach this server at: HOSTBENCH_PUBLIC_URL, else the one this request came to (its Host
    header has passed the allowed-hosts check)."""
    configured = get_settings().hostbench_public_url
    if configured:
        return configured.rstrip("/")
    return f"{request.url.scheme}://{request.headers['host']}"


def runner_base_url(request: Request) -> str:
    """The URL runners send their control traffic to (app.core.config: HOSTBENCH_RUNNER_URL, else the public
    URL's host on HOSTBENCH_RUNNER_PORT, else the public URL)."""
    return runner_url_for(public_base_url(request))


def runner_url_for(base: str) -> str:
    """runner_base_url from a public base URL (the CLI's, which has no request)."""
    s = get_settings()
    if s.hostbench_runner_url:
        return s.hostbench_runner_url.rstrip("/")
    if s.hostbench_runner_port is None:
        return base
    parts = urlsplit(base)
    host = parts.hostname or "localhost"
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}:{s.hostbench_runner_port}"


# A page of hosts: each carries its inventory and peaks (about 90 ms of CPU for 1,000 hosts, ./hostbench load), so
# a page is bounded like every other list; `count` says how many match in all. Search, filters, sort and paging are
# PostgreSQL's (app.hosts.listing): the dashboard's table asks for 50 at a time.
HOSTS_PAGE_MAX = 1000


@router.get("", response_model=HostsPublic, responses={304: {"description": "unchanged since the ETag sent in "
                                                                           "If-None-Match"}})
def read_hosts(request: Request, _: ViewerDep, session: SessionDep,
               limit: Annotated[int, Query(ge=1, le=HOSTS_PAGE_MAX)] = HOSTS_PAGE_MAX,
               offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
               q: Annotated[str | None, Query(max_length=128, description="part of the name, host name, CPU "
                                                                          "model, address or a label")] = None,
               label: Annotated[list[Annotated[str, StringConstraints(pattern=listing.LABEL_FILTER)]] | None,
                                Query(max_length=listing.LABEL_FILTERS_MAX,
                                      description="key=value (the key letters, digits and . _ / -); every one "
                                                  "must match")] = None,
               status: listing.HostStatus | None = None,
               cpu: Annotated[str | None, Query(max_length=256, description="the CPU model, exactly")] = None,
               sort: listing.HostSort = "id", order: listing.Order = "asc") -> Response:
    query = listing.HostQuery(q=q or None, labels=tuple(label or ()), status=status, cpu=cpu or None, sort=sort,
                              order=order)
    hosts, count = listing.list_hosts(session, query, limit, offset)
    page = [service.to_public(h) for h in hosts]
    for h in page:  # to the minute in a list: a heartbeat alone does not change a page (and its ETag) every poll
        h.last_seen_at = h.last_seen_at and h.last_seen_at.replace(second=0, microsecond=0)
    return listing.etagged(request, HostsPublic(data=page, count=count))


@router.get("/facets", response_model=listing.HostFacets)
def read_host_facets(_: ViewerDep, session: SessionDep) -> listing.HostFacets:
    """What the hosts table's filters offer: statuses, CPU models and labels, each with its number of hosts."""
    return listing.facets(session)


@router.get("/{host_id:int}", response_model=HostPublic, responses={304: {"description": "unchanged since the ETag "
                                                                                   "sent in If-None-Match"}})
def read_host(host_id: Id, _: ViewerDep, session: SessionDep, request: Request) -> Response:
    # serialised once, tagged (the response model's second pass skipped: a third of the dashboard's reads)
    return answer(request, service.to_public(service.get_host(session, host_id)))


@router.patch("/{host_id:int}/labels", response_model=HostPublic)
def update_labels(host_id: Id, body: HostLabelsUpdate, p: OperatorDep, session: SessionDep) -> HostPublic:
    host = service.get_host(session, host_id)
    changes = body.model_dump(exclude_unset=True)
    host.labels = {**(host.labels or {}), **changes}
    record(session, p.name, "host.labels", f"host {host.name}", **changes)
    session.commit()
    return service.to_public(host)


@router.put("/{host_id:int}/peaks/{key}", response_model=HostPublic)
def override_peak(host_id: Id, key: PeakKey, body: PeakOverride, p: OperatorDep, session: SessionDep) -> HostPublic:
    """A peak entered by a person (from a datasheet, say) replaces the computed one for later runs."""
    host = service.get_host(session, host_id)
    record(session, p.name, "host.peak.set", f"host {host.name}", key=key, value=body.value, note=body.note)
    service.set_peak_override(session, host, key, body.value, body.note, by=p.name)
    return service.to_public(host)


@router.delete("/{host_id:int}/peaks/{key}", response_model=HostPublic)
def clear_peak_override(host_id: Id, key: PeakKey, p: OperatorDep, session: SessionDep) -> HostPublic:
    host = service.get_host(session, host_id)
    record(session, p.name, "host.peak.clear", f"host {host.name}", key=key)
    service.set_peak_override(session, host, key, None, None)
    return service.to_public(host)


@router.post("/registration-tokens", response_model=RegistrationTokenCreated, status_code=201)
def create_registration_token(body: RegistrationTokenCreate, request: Request, p: AdminDep,
                              session: SessionDep) -> RegistrationTokenCreated:
    """Add host(s): a token (single use unless `uses` says otherwise) and every way to install a runner with it."""
    token, row = enrol.create(session, body.ttl_s, p.name, body.uses, body.name, body.labels)
    record(session, p.name, "host.registration_token", f"token {row.id}", expires_at=row.expires_at.isoformat(),
           uses=body.uses, name=body.name, labels=body.labels)
    session.commit()
    return RegistrationTokenCreated(token=token, expires_at=row.expires_at, info=token_public(row),
                                    **install_forms(runner_base_url(request), token, body.namespace, body.image,
                                                    body.nodes))


def install_forms(base: str, token: str, namespace: str | None, image: str | None,
                  nodes: list[str] | None = None) -> dict[str, str]:
    """Every way in for a token (InstallForms' fields), each built on the one installer (app.install)."""
    from app.install import fleet
    from app.install.service import container_command, install_command

    k8s = {k: v for k, v in (("namespace", namespace), ("image", image)) if v}
    return {"install_command": install_command(base, token), "container_command": container_command(base, token),
            "shell_command": fleet.shell_command(base, token), "cloud_init": fleet.cloud_init(base, token),
            "kubernetes_manifest": fleet.kubernetes_manifest(base, token, **k8s),
            "kubernetes_jobs": fleet.kubernetes_jobs_manifest(base, token, nodes, **k8s) if nodes else ""}


def token_public(row: RegistrationToken) -> RegistrationTokenPublic:
    usable = row.revoked_at is None and row.expires_at > utcnow() and (row.uses_left is None or row.uses_left > 0)
    return RegistrationTokenPublic(
        id=row.id, name=row.name, created_at=row.created_at, created_by=row.created_by, expires_at=row.expires_at,
        max_uses=row.max_uses, uses_left=row.uses_left, uses=row.uses, labels=row.labels or {},
        revoked_at=row.revoked_at, usable=usable)


@router.get("/registration-tokens", response_model=RegistrationTokensPublic)
def list_registration_tokens(_: AdminDep, session: SessionDep,
                             limit: Annotated[int, Query(ge=1, le=1000)] = 100,
                             offset: Annotated[int, Query(ge=0, le=10**9)] = 0) -> RegistrationTokensPublic:
    """Every token, newest first, with its uses left (the joins themselves are in the audit log: host.enrol)."""
    rows, count = enrol.list_tokens(session, limit, offset)
    return RegistrationTokensPublic(data=[token_public(r) for r in rows], count=count)


@router.delete("/registration-tokens/{token_id:int}", response_model=RegistrationTokenPublic)
def revoke_registration_token(token_id: Id, p: AdminDep, session: SessionDep) -> RegistrationTokenPublic:
    """No runner may join with it any more; the hosts that joined with it stay."""
    row = enrol.revoke(session, token_id)
    record(session, p.name, "host.registration_token.revoke", f"token {row.id}", name=row.name)
    session.commit()
    return token_public(row)


@router.post("/{host_id:int}/rotate-credential", response_model=HostPublic, status_code=202)
def rotate_credential(host_id: Id, p: AdminDep, session: SessionDep) -> HostPublic:
    """The runner is told at its next heartbeat and swaps its credential; the old one works until then."""
    host = service.get_host(session, host_id)
    record(session, p.name, "host.rotate", f"host {host.name}")
    admin.request_rotation(session, host)
    return service.to_public(host)
