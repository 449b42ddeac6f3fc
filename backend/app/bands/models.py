from datetime import datetime

from sqlalchemy import BigInteger, Boolean, Float, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, utcnow


class Band(Base):
    """One version of a declared band: the expected range of one figure (experiment, op, threads, block) on one
    kind of host (`cpu=<model>/<cores>`, or a label `key=value`). Setting or removing a band adds a version; the
    newest version is the band, and a verdict names the version it was judged against. `of_peak`: target, lower
    and upper are fractions of the row's theoretical peak, not values in `unit`."""

    __tablename__ = "bands"

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(200))
    experiment: Mapped[str] = mapped_column(String(32))
    op: Mapped[str | None] = mapped_column(String(32))
    threads: Mapped[int] = mapped_column(Integer)
    block_bytes: Mapped[int | None] = mapped_column(BigInteger)
    version: Mapped[int] = mapped_column(Integer)
    target: Mapped[float | None] = mapped_column(Float)
    lower: Mapped[float | None] = mapped_column(Float)
    upper: Mapped[float | None] = mapped_column(Float)
    of_peak: Mapped[bool] = mapped_column(Boolean, default=False)
    unit: Mapped[str] = mapped_column(String(16), default="")
    note: Mapped[str] = mapped_column(String(2000), default="")
    removed: Mapped[bool] = mapped_column(Boolean, default=False)
    set_by: Mapped[str | None] = mapped_column(String(64))
    set_at: Mapped[datetime] = mapped_column(default=utcnow)
