"""A schedule: a suite, where it runs (hosts, or the hosts carrying a label when it fires), and when (an interval or
a cron expression); and its history, one row per firing."""
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, JSONType, utcnow


class Schedule(Base):
    __tablename__ = "schedules"
    __table_args__ = (Index("ix_schedules_due", "enabled", "next_fire_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    suite: Mapped[str] = mapped_column(String(64))  # a built-in suite's id or saved-<n>
    # the target: a list of host ids, or one label (label_key = label_value) resolved when it fires
    host_ids: Mapped[list[int] | None] = mapped_column(JSONType)
    label_key: Mapped[str | None] = mapped_column(String(64))
    label_value: Mapped[str | None] = mapped_column(String(64))
    # the recurrence: one of the two
    interval_s: Mapped[int | None] = mapped_column(Integer)
    cron: Mapped[str | None] = mapped_column(String(100))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    next_fire_at: Mapped[datetime]  # kept while disabled; set afresh when enabled again
    created_by: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class ScheduleFiring(Base):
    """One firing: `started` (a suite run on the hosts that were free; `skipped` names the others and why),
    `skipped` (no host was free, or none carries the label) or `failed` (the suite run was refused: the reason)."""

    __tablename__ = "schedule_firings"

    id: Mapped[int] = mapped_column(primary_key=True)
    schedule_id: Mapped[int] = mapped_column(ForeignKey("schedules.id", ondelete="CASCADE"), index=True)
    fired_at: Mapped[datetime] = mapped_column(default=utcnow)
    due_at: Mapped[datetime | None]  # the time it was due (beat); none for run-now
    trigger: Mapped[str] = mapped_column(String(16))  # beat | run-now
    outcome: Mapped[str] = mapped_column(String(16))  # started | skipped | failed
    reason: Mapped[str | None] = mapped_column(String(2000))
    suite_run_id: Mapped[int | None] = mapped_column(ForeignKey("suite_runs.id", ondelete="SET NULL"))
    host_ids: Mapped[list[int]] = mapped_column(JSONType, default=list)  # the hosts it started on
    skipped: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)  # [{host_id, name, reason}]
