import ipaddress
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core.config import get_settings
from app.core.db import utcnow
from app.core.errors import NotFound, Unauthorized
from app.core.security import hash_token, new_token
from app.hosts.models import Host, RegistrationToken
from app.hosts.peaks import cpu_peak
from app.hosts.schemas import PEAK_UNITS, HostPublic, Peak


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
    cpu = host.inventory.get("cpu") or {}
    threads = (cpu.get("sockets") or 1) * (cpu.get("cores_per_socket") or 1)
    for op, key in (("fp64", "cpu_fp64"), ("fp32", "cpu_fp32"), ("int32", "cpu_int32")):
        peak, why = cpu_peak(host.inventory, op, threads, None, host.measured_clock_ghz)
        peaks[key] = peak
        if why:
            notes[key] = why
    mem = host.inventory.get("memory") or {}
    if mem.get("channels") and mem.get("speed_mts"):
        peaks["memory_bw"] = Peak(value=mem["channels"] * mem["speed_mts"] * 8.0, unit="MB/s", source="computed",
                                  formula=f"{mem['channels']} channels × {mem['speed_mts']} MT/s × 8 bytes")
    else:
        peaks["memory_bw"] = None
        notes["memory_bw"] = "DIMM channels and speed not exposed by this host's firmware; enter the peak by hand"
    for key, o in (host.peak_overrides or {}).items():
        peaks[key] = Peak(value=o["value"], unit=o["unit"], source="user",
                          formula=f"entered by a person{': ' + o['note'] if o.get('note') else ''}")
        notes.pop(key, None)
    return peaks, notes


def set_peak_override(session: Session, host: Host, key: str, value: float | None, note: str | None) -> None:
    overrides = dict(host.peak_overrides or {})
    if value is None:
        overrides.pop(key, None)
    else:
        overrides[key] = {"value": value, "unit": PEAK_UNITS[key], "note": note}
    host.peak_overrides = overrides
    session.commit()


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
    )


def get_host(session: Session, host_id: int) -> Host:
    host = session.get(Host, host_id)
    if host is None:
        raise NotFound(f"host {host_id} not found")
    return host


def list_hosts(session: Session) -> list[Host]:
    return list(session.scalars(select(Host).where(Host.revoked_at.is_(None)).order_by(Host.id)))


def create_registration_token(session: Session, ttl_s: float | None = None) -> str:
    token = new_token("hbreg")
    ttl = ttl_s if ttl_s is not None else get_settings().registration_token_ttl_s
    session.add(RegistrationToken(token_hash=hash_token(token), expires_at=utcnow() + timedelta(seconds=ttl)))
    session.commit()
    return token


def register_runner(
    session: Session, registration_token: str, name: str, hostname: str, version: str,
    inventory: dict[str, Any], labels: dict[str, Any],
) -> tuple[Host, str]:
    reg = session.scalar(select(RegistrationToken).where(RegistrationToken.token_hash == hash_token(registration_token)))
    if reg is None or reg.expires_at < utcnow():
        raise Unauthorized("registration token is unknown or expired; create a new one with `./hostbench token`")
    token = new_token("hbrun")
    host = Host(
        name=name, hostname=hostname, runner_version=version, token_hash=hash_token(token),
        inventory=inventory, labels=labels, last_seen_at=utcnow(),
    )
    session.add(host)
    session.commit()
    return host, token


def authenticate_runner(session: Session, token: str | None) -> Host:
    if not token:
        raise Unauthorized("runner credential missing")
    host = session.scalar(select(Host).where(Host.token_hash == hash_token(token)))
    if host is None or host.revoked_at is not None:
        raise Unauthorized("runner credential unknown or revoked")
    return host


def note_address(session: Session, host: Host, address: str | None) -> None:
    """Record the source IP of a runner's call (what a two-host job's driver connects to); only an IP literal."""
    if not address:
        return
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    address = str(ip)
    if host.address != address:
        host.address = address
        session.commit()


def revoke(session: Session, host: Host) -> None:
    host.revoked_at = utcnow()
    session.commit()
