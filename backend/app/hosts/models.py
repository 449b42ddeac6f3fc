from datetime import datetime
from typing import Any

from sqlalchemy import Index, Integer, String, func
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, JSONType, utcnow


class Host(Base):
    """A target host, known through the runner daemon that registered for it."""

    __tablename__ = "hosts"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(128))
    hostname: Mapped[str] = mapped_column(String(255))
    runner_version: Mapped[str] = mapped_column(String(64), default="")
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    registered_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_seen_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
    inventory: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    labels: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    # Measured by the CPU kernel under load at the start of its latest run (GHz); feeds the CPU peak.
    measured_clock_ghz: Mapped[float | None]
    # Peaks entered by a person: {"cpu_fp64": {"value": 123.0, "unit": "GFLOP/s", "note": "..."}}; they win.
    peak_overrides: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, server_default="{}")
    # Raised whenever the peaks a result is computed against change (an override set or cleared): each stored
    # result records the version it used (Run.result_basis), and app.results.stored recomputes the others.
    peaks_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # The peaks_version whose runs the recompute task has marked stale (app.jobs.stored.mark_stale); behind
    # peaks_version while a change waits for the task.
    peaks_marked: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # The source IP of the runner's latest call (request.client.host); a two-host network job's driver
    # connects to the serving host at this address. Never taken from a request body.
    address: Mapped[str | None] = mapped_column(String(45))
    # Credential rotation: the new credential's hash waits here until the runner first uses it, so a runner
    # that dies between the server's answer and saving the new credential keeps working with the old one.
    next_token_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    rotate_requested_at: Mapped[datetime | None]
    # Removed from the fleet but its runs kept (DELETE /api/hosts/{id}?history=keep).
    deleted_at: Mapped[datetime | None]
    # The machine's own id (/etc/machine-id) as its runner reported it at registration: a runner that joins
    # again from the same machine gets this row back (its history kept) with a new credential.
    machine_id: Mapped[str | None] = mapped_column(String(64), index=True)
    # The latest verdict of each health check this host had (app.checks): {suite: {verdict, at, check_id}}.
    health: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, server_default="{}")



# A live host's name is unique whatever its case (app/hosts/names.py; migration 0015)
Index("uq_hosts_live_name_ci", func.lower(Host.name), unique=True, postgresql_where=Host.deleted_at.is_(None))

class RegistrationToken(Base):
    """A token runners trade for their own credentials: once ("Add host", the default), N times or without
    limit (an enrolment token for a fleet); each join takes one use in one UPDATE (app.hosts.enrol)."""

    __tablename__ = "registration_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    created_by: Mapped[str | None] = mapped_column(String(64))
    # The latest join: when, and the host it made or took back.
    used_at: Mapped[datetime | None]
    host_id: Mapped[int | None]
    name: Mapped[str | None] = mapped_column(String(128))
    # None: unlimited. uses_left is what the next join takes one of; uses counts the joins so far.
    max_uses: Mapped[int | None]
    uses_left: Mapped[int | None]
    uses: Mapped[int] = mapped_column(default=0, server_default="0")
    # Given to every host that joins with it (over the runner's own labels of the same key).
    labels: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, server_default="{}")
    revoked_at: Mapped[datetime | None]
