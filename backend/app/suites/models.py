from datetime import datetime
from typing import Any

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, JSONType, utcnow


class SavedSuite(Base):
    """A suite a person saved from their own choices: the same shape as a built-in one (hostbench_common.suites),
    every item checked as a job body when saved. Its id in the API is "saved-<id>"."""

    __tablename__ = "saved_suites"

    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(String(2000), default="")
    items: Mapped[list[dict[str, Any]]] = mapped_column(JSONType)  # [{experiment, params, needs}]
    created_by: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
