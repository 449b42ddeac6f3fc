from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, false
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, JSONType, utcnow


class HealthCheck(Base):
    """A suite started as a health check on hosts picked (or every host with `label`); judged once, when its suite
    run has ended (`judged_at`). `kind_by`: which kind of host the learned bands take siblings from."""

    __tablename__ = "health_checks"

    id: Mapped[int] = mapped_column(primary_key=True)
    suite: Mapped[str] = mapped_column(String(32))
    title: Mapped[str] = mapped_column(String(200))
    suite_run_id: Mapped[int | None] = mapped_column(ForeignKey("suite_runs.id", ondelete="SET NULL"))
    host_ids: Mapped[list[int]] = mapped_column(JSONType)
    label: Mapped[str | None] = mapped_column(String(200))
    kind_by: Mapped[str] = mapped_column(String(64), default="cpu")
    created_by: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    judged_at: Mapped[datetime | None]
    # drain a FAILed host's Slurm node with the check's reason (app.hosts.slurm.drain; asked by an admin)
    drain_on_fail: Mapped[bool] = mapped_column(default=False, server_default=false())


class HostVerdict(Base):
    """One host's verdict in one check: PASS, FAIL, DISTURBED or NO_BASELINE, every figure judged (value, band and
    its version, distance, run), the verdict the host had before for this suite, and the webhook sent when it
    changed."""

    __tablename__ = "host_verdicts"

    id: Mapped[int] = mapped_column(primary_key=True)
    check_id: Mapped[int] = mapped_column(ForeignKey("health_checks.id", ondelete="CASCADE"), index=True)
    host_id: Mapped[int] = mapped_column(ForeignKey("hosts.id", ondelete="CASCADE"), index=True)
    suite: Mapped[str] = mapped_column(String(32))
    verdict: Mapped[str] = mapped_column(String(16))
    previous: Mapped[str | None] = mapped_column(String(16))
    judged_at: Mapped[datetime] = mapped_column(default=utcnow)
    figures: Mapped[dict[str, Any]] = mapped_column(JSONType)
    webhook_status: Mapped[str] = mapped_column(String(16), default="skipped")
    webhook_detail: Mapped[str | None] = mapped_column(String(500))
    webhook_tries: Mapped[int] = mapped_column(Integer, default=0)
