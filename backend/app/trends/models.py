"""Trends' tables: thresholds people set on a metric, the events a finished run raised (a threshold crossed, a change
the detector found), which runs were looked at, and where notifications go."""
from datetime import datetime

from sqlalchemy import BigInteger, Float, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, utcnow


class TrendThreshold(Base):
    """flag when a metric of a host (host_id) or of every host with a label (label_key = label_value, as the run's
    label snapshot had it) is below / above `value`, or fell by more than `value` % from its baseline."""

    __tablename__ = "trend_thresholds"

    id: Mapped[int] = mapped_column(primary_key=True)
    host_id: Mapped[int | None] = mapped_column(ForeignKey("hosts.id", ondelete="CASCADE"), index=True)
    label_key: Mapped[str | None] = mapped_column(String(16))
    label_value: Mapped[str | None] = mapped_column(String(64))
    experiment: Mapped[str] = mapped_column(String(32))
    op: Mapped[str | None] = mapped_column(String(32))
    threads: Mapped[int] = mapped_column(Integer)
    block_bytes: Mapped[int | None] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(16))  # below | above | drop_pct
    value: Mapped[float] = mapped_column(Float)
    created_by: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class TrendEvent(Base):
    """A finished run crossed a threshold, or the detector found a change at it; and what became of its
    notifications (webhook, e-mail): pending, sent, failed or skipped, with the reason."""

    __tablename__ = "trend_events"

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    host_id: Mapped[int] = mapped_column(ForeignKey("hosts.id", ondelete="CASCADE"), index=True)
    threshold_id: Mapped[int | None] = mapped_column(ForeignKey("trend_thresholds.id", ondelete="SET NULL"))
    experiment: Mapped[str] = mapped_column(String(32))
    op: Mapped[str | None] = mapped_column(String(32))
    threads: Mapped[int] = mapped_column(Integer)
    block_bytes: Mapped[int | None] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(16))  # threshold | regression | improvement
    value: Mapped[float] = mapped_column(Float)
    unit: Mapped[str] = mapped_column(String(16))
    text: Mapped[str] = mapped_column(String(1000))
    webhook_status: Mapped[str] = mapped_column(String(16), default="pending")
    webhook_detail: Mapped[str | None] = mapped_column(String(500))
    email_status: Mapped[str] = mapped_column(String(16), default="pending")
    email_detail: Mapped[str | None] = mapped_column(String(500))


class TrendCheck(Base):
    """A finished run the evaluator has looked at (app.trends.evaluator): each is looked at once."""

    __tablename__ = "trend_checks"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    checked_at: Mapped[datetime] = mapped_column(default=utcnow)


class TrendNotify(Base):
    """Where notifications go: one row (id 1), set by an admin."""

    __tablename__ = "trend_notify"

    id: Mapped[int] = mapped_column(primary_key=True)
    webhook_url: Mapped[str | None] = mapped_column(String(2000))
    email_to: Mapped[str | None] = mapped_column(String(320))
    updated_by: Mapped[str | None] = mapped_column(String(64))
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
