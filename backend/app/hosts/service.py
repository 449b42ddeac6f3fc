import ipaddress
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.core.broker import later
from app.core.config import get_settings
from app.core.db import utcnow
from app.core.errors import Conflict, NotFound, Unauthorized
from app.core.security import hash_token, new_token
from app.hosts import enrol
from app.hosts.models import Host, RegistrationToken
from app.hosts.peaks import cpu_peak, readable_inventory
from app.hosts.schemas import PEAK_UNITS, HostHealth, HostPublic, Peak

RUNNER_TOKEN = "hbrun"  # noqa: S105 - a runner credential's prefix: hbrun_… (docs/security.md, "Identities")


def is_online(host: Host) -> bool:
    if host.revoked_at is not None or host.last_seen_at is None:
        return False
    return (utcnow() - host.last_seen_at).total_seconds() < get_settings().runner_online_s


def runners_online(session: Session) -> int:
    since = utcnow() - timedelta(seconds=get_settings().runner_online_s)
    q = select(func.count()).select_from(Host).where(Host.last_seen_at >= since, Host.revoked_at.is_(None))
    return session.scalar(q) or 0


def host_peaks(host: Host) -> tuple[dict[str, Peak | None], dict[str, str]]:
    peaks: dict[str, Peak | None] = {}
    notes: dict[str, str] = {}
    inventory = readable_inventory(host.inventory)
    cpu = inventory.get("cpu") or {}
    threads = (cpu.get("sockets") or 1) * (cpu.get("cores_per_socket") or 1)
    for op, key in (("fp64", "cpu_fp64"), ("fp32", "cpu_fp32"), ("int32", "cpu_int32")):
        peak, why = cpu_peak(inventory, op, threads, None, host.measured_clock_ghz)
        peaks[key] = peak
        if why:
            notes[key] = why
    mem = inventory.get("memory") or {}
    if mem.get("channels") and mem.get("speed_mts"):
        peaks["memory_bw"] = Peak(value=mem["channels"] * mem["speed_mts"] * 8.0, unit="MB/s", source="computed",
                                  formula=f"{mem['channels']} channels × {mem['speed_mts']} MT/s × 8 bytes")
    else:
        peaks["memory_bw"] = None
        notes["memory_bw"] = "DIMM channels and speed not exposed by this host's firmware; enter the peak by hand"
    for key, o in (host.peak_overrides or {}).items():
        who = o.get("by") or "a person"
        peaks[key] = Peak(value=o["value"], unit=o["unit"], source="user", since=o.get("at"),
                          formula=f"entered by {who}{': ' + o['note'] if o.get('note') else ''}")
        notes.pop(key, None)
    return peaks, notes


def set_peak_override(session: Session, host: Host, key: str, value: float | None, note: str | None,
                      by: str | None = None) -> None:
    overrides = dict(host.peak_overrides or {})
    if value is None:
        overrides.pop(key, None)
    else:
        overrides[key] = {"value": value, "unit": PEAK_UNITS[key], "note": note, "by": by, "at": utcnow().isoformat()}
    host.peak_overrides = overrides
    # the results computed against the old peaks are recomputed once, in the background (app.jobs.stored)
    host.peaks_version = (host.peaks_version or 0) + 1
    session.commit()
    ring_recompute(host.id)


# The task that recomputes the stored results of a host whose peaks changed (app.worker.tasks.recompute_results,
# app.jobs.stored.recompute_stale); rung by name, as the doorbell is (app.jobs.doorbell).
RECOMPUTE_RESULTS = "hostbench.results.recompute"


def ring_recompute(host_id: int | None) -> None:
    """After the commit, on the broker's sender thread: a lost message costs only time (beat's sweep rings it)."""
    from app.core.celery_app import celery_app

    later(lambda: celery_app.send_task(RECOMPUTE_RESULTS, (host_id,), retry=False))


def to_public(host: Host) -> HostPublic:
    peaks, notes = host_peaks(host)
    return HostPublic(
        id=host.id,
        name=host.name,
        hostname=host.hostname,
        online=is_online(host),
        last_seen_at=host.last_seen_at,
        registered_at=host.registered_at,
        runner_version=host.runner_version,
        labels=host.labels or {},
        inventory=host.inventory or {},
        peaks=peaks,
        peak_notes=notes,
        revoked=host.revoked_at is not None,
        revoked_at=host.revoked_at,
        address=host.address,
        server_version=get_settings().hostbench_version,
        version_mismatch=bool(host.runner_version) and host.runner_version != get_settings().hostbench_version,
        credential_rotation_pending=host.rotate_requested_at is not None,
        health=health_of(host),
    )


def health_of(host: Host, now: datetime | None = None) -> list[HostHealth]:
    """A host's latest verdict of each health check it had, newest first (hosts.health, written by app.checks)."""
    now = now or utcnow()
    out = []
    for suite, h in (host.health or {}).items():
        try:
            at = datetime.fromisoformat(str(h["at"]))
            out.append(HostHealth(suite=suite, verdict=h["verdict"], at=at, age_s=round((now - at).total_seconds(), 1),
                                  check_id=int(h["check_id"])))
        except (KeyError, TypeError, ValueError):
            continue
    return sorted(out, key=lambda x: x.at, reverse=True)


def get_host(session: Session, host_id: int) -> Host:
    host = session.get(Host, host_id)
    if host is None or host.deleted_at is not None:
        raise NotFound(f"host {host_id} not found")
    return host


def list_hosts(session: Session, limit: int, offset: int = 0) -> tuple[list[Host], int]:
    """A page of the hosts not deleted, revoked ones included (the dashboard shows them so they can be removed),
    and how many there are in all."""
    live = Host.deleted_at.is_(None)
    count = session.scalar(select(func.count()).select_from(Host).where(live)) or 0
    return list(session.scalars(select(Host).where(live).order_by(Host.id).limit(limit).offset(offset))), count


def create_registration_token(session: Session, ttl_s: float | None = None,
                              created_by: str | None = None) -> tuple[str, RegistrationToken]:
    return enrol.create(session, ttl_s, created_by)


def _name_taken(name: str, host_id: int | None) -> Conflict:
    which = f" (host {host_id})" if host_id is not None else ""
    return Conflict(f"a host named {name!r} (in any case) is registered{which}; delete it in the dashboard first, "
                    "or give this runner another name (--name)")


def register_runner(
    session: Session, registration_token: str, name: str, hostname: str, version: str,
    inventory: dict[str, Any], labels: dict[str, Any], address: str | None = None, machine_id: str | None = None,
) -> tuple[Host, str]:
    """A new host for a runner with a valid registration token (or its machine's host again: app.hosts.enrol);
    its address is the one it registered from (the heartbeats keep it current), so a two-host job can use it
    before the first heartbeat. The token's labels go over the runner's own."""
    use = enrol.take_use(session, registration_token)
    labels = {**labels, **use.labels}
    again = enrol.host_of_machine(session, machine_id, name)
    if again is not None:
        token = enrol.rejoin(again, hostname, version, inventory, labels, ip_literal(address))
        enrol.audit_join(session, use, again, address, again=True)
        session.commit()
        return again, token
    taken = session.scalar(select(Host.id).where(func.lower(Host.name) == name.lower(), Host.deleted_at.is_(None)))
    if taken is not None:
        session.rollback()
        raise _name_taken(name, taken)
    token = new_token(RUNNER_TOKEN)
    host = Host(
        name=name, hostname=hostname, runner_version=version, token_hash=hash_token(token),
        inventory=inventory, labels=labels, last_seen_at=utcnow(), address=ip_literal(address),
        machine_id=machine_id,
    )
    session.add(host)
    try:
        session.flush()
    except IntegrityError:  # another registration took the name (any case) a moment ago: the unique index
        session.rollback()
        raise _name_taken(name, None) from None
    enrol.audit_join(session, use, host, address, again=False)
    session.commit()
    return host, token


def authenticate_runner(session: Session, token: str | None) -> Host:
    if not token:
        raise Unauthorized("runner credential missing")
    digest = hash_token(token)
    host = session.scalar(select(Host).where(or_(Host.token_hash == digest, Host.next_token_hash == digest)))
    if host is None or host.revoked_at is not None or host.deleted_at is not None:
        raise Unauthorized("runner credential unknown or revoked")
    if host.next_token_hash == digest:  # the first call with a rotated credential retires the old one
        host.token_hash, host.next_token_hash, host.rotate_requested_at = digest, None, None
        session.commit()
    return host


def ip_literal(address: str | None) -> str | None:
    """A caller's address as hosts record it: an IP literal (an IPv4-mapped IPv6 one as IPv4), else None."""
    if not address:
        return None
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return str(ip)


def note_address(session: Session, host: Host, address: str | None) -> None:
    """Record the source IP of a runner's call (what a two-host job's driver connects to); only an IP literal."""
    address = ip_literal(address)
    if address is None:
        return
    if host.address != address:
        host.address = address
        session.commit()


def rotate_credential(session: Session, host: Host) -> str:
    """A new credential for the runner; the old one stays valid until the new one is first used."""
    token = new_token(RUNNER_TOKEN)
    host.next_token_hash = hash_token(token)
    session.commit()
    return token
