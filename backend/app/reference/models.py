"""Reference-tool outputs produced elsewhere and imported into a host's history (`./hostbench parse ... --import`):
the metrics the server's own parser read from the uploaded text, with where they came from and who brought them."""
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, JSONType, utcnow


class ImportedResult(Base):
    __tablename__ = "imported_results"

    id: Mapped[int] = mapped_column(primary_key=True)
    host_id: Mapped[int] = mapped_column(ForeignKey("hosts.id", ondelete="CASCADE"), index=True)
    tool: Mapped[str] = mapped_column(String(16))
    format: Mapped[str] = mapped_column(String(32))
    file_name: Mapped[str | None] = mapped_column(String(255))
    metrics: Mapped[list[dict[str, Any]]] = mapped_column(JSONType)
    imported_by: Mapped[str] = mapped_column(String(64))
    imported_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
