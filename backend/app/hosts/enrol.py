"""Enrolment: a runner joins with a registration token. A token has a use count (1 for "Add host", N or
unlimited for a fleet), an expiry, labels for every host that joins with it and a name, and can be revoked.

One join takes one use in a single UPDATE ... WHERE uses_left > 0 RETURNING: PostgreSQL's row lock makes
concurrent joins queue on the token, so no count is ever exceeded (tests/test_enrolment.py races 100 joins on a
token of 60). The use is part of the join's transaction: a join refused later (a name taken) gives it back.

A runner that joins again from the same machine (the same machine id) under the same name takes back its host
row, runs and history kept, with a new credential (several runners on one machine under their own names, as in
a test fleet or containers, stay separate hosts); the old credential stops working at once (one runner per
machine and name). Joining again needs a valid token with a use left, like a first join, and takes a use; a
revoked host cannot join again until it is deleted (revoking is a person's decision, which a token must not
undo)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.audit.service import record
from app.core.config import get_settings
from app.core.db import utcnow
from app.core.errors import Conflict, NotFound, Unauthorized
from app.core.security import hash_token, new_token
from app.hosts.models import Host, RegistrationToken

T = RegistrationToken


@dataclass(frozen=True)
class Use:
    token_id: int
    name: str | None
    labels: dict[str, Any]


def create(session: Session, ttl_s: float | None = None, created_by: str | None = None, uses: int | None = 1,
           name: str | None = None, labels: dict[str, str] | None = None) -> tuple[str, RegistrationToken]:
    """A new token (shown once; only its hash is kept). uses=None: unlimited."""
    token = new_token("hbreg")
    ttl = ttl_s if ttl_s is not None else get_settings().registration_token_ttl_s
    row = T(token_hash=hash_token(token), expires_at=utcnow() + timedelta(seconds=ttl), created_by=created_by,
            max_uses=uses, uses_left=uses, uses=0, name=name, labels=dict(labels or {}))
    session.add(row)
    session.commit()
    return token, row


def take_use(session: Session, registration_token: str) -> Use:
    """One use of the token, in the caller's transaction; 401 with the reason when there is none."""
    now = utcnow()
    digest = hash_token(registration_token)
    got = session.execute(
        update(T)
        .where(T.token_hash == digest, T.revoked_at.is_(None), T.expires_at > now,
               (T.uses_left.is_(None)) | (T.uses_left > 0))
        .values(uses_left=T.uses_left - 1, uses=T.uses + 1, used_at=now)  # NULL - 1 stays NULL: unlimited
        .returning(T.id, T.name, T.labels)
    ).one_or_none()
    if got is not None:
        return Use(token_id=got.id, name=got.name, labels=dict(got.labels or {}))
    session.rollback()
    row = session.scalar(select(T).where(T.token_hash == digest))
    hint = "get a new one from Hosts → Add hosts (or `./hostbench token`)"
    if row is None:
        raise Unauthorized(f"registration token unknown; {hint}")
    label = f"registration token {row.name or row.id}"
    if row.revoked_at is not None:
        raise Unauthorized(f"{label} was revoked; {hint}")
    if row.expires_at <= now:
        raise Unauthorized(f"{label} expired at {row.expires_at.isoformat()}; {hint}")
    raise Unauthorized(f"{label} has no uses left (all {row.max_uses} already used); {hint}")


def host_of_machine(session: Session, machine_id: str | None, name: str) -> Host | None:
    """The host this machine joined as before under this name (not deleted); a revoked one refuses the join."""
    if not machine_id:
        return None
    host = session.scalar(select(Host).where(Host.machine_id == machine_id,
                                             func.lower(Host.name) == name.lower(),
                                             Host.deleted_at.is_(None))
                          .order_by(Host.id.desc()).limit(1))
    if host is not None and host.revoked_at is not None:
        session.rollback()
        raise Conflict(f"host {host.name} (machine {machine_id}) was revoked; delete it in the dashboard before "
                       "this machine joins again")
    return host


def rejoin(host: Host, hostname: str, version: str, inventory: dict[str, Any], labels: dict[str, Any],
           address: str | None) -> str:
    """The host row back for its machine: a new credential (the old one, and a pending rotation, dropped)."""
    token = new_token("hbrun")
    host.token_hash, host.next_token_hash, host.rotate_requested_at = hash_token(token), None, None
    host.hostname, host.runner_version, host.inventory = hostname, version, inventory
    host.labels = {**(host.labels or {}), **labels}
    host.last_seen_at = utcnow()
    if address:
        host.address = address
    return token


def audit_join(session: Session, use: Use, host: Host, address: str | None, again: bool) -> None:
    reg = session.get(T, use.token_id)
    if reg is not None:
        reg.host_id = host.id
    record(session, "runner", "host.rejoin" if again else "host.enrol", f"host {host.name}",
           host_id=host.id, token_id=use.token_id, token_name=use.name, address=address,
           machine_id=host.machine_id)


def list_tokens(session: Session, limit: int, offset: int) -> tuple[list[RegistrationToken], int]:
    count = session.scalar(select(func.count()).select_from(T)) or 0
    rows = session.scalars(select(T).order_by(T.id.desc()).limit(limit).offset(offset))
    return list(rows), count


def revoke(session: Session, token_id: int) -> RegistrationToken:
    """No more joins with it; hosts that joined stay."""
    row = session.get(T, token_id)
    if row is None:
        raise NotFound(f"registration token {token_id} not found")
    if row.revoked_at is None:
        row.revoked_at = utcnow()
    return row
