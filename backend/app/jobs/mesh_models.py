"""Hosts tested together (app.mesh): a mesh is N hosts measured pairwise in rounds, or N clients driving one
server at once. Its measurements are ordinary network_pair jobs; a MeshJob row ties each job to its mesh and
round. Which host serves and which drives is the job's runs' (their roles), never stored twice."""
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, JSONType, utcnow


class Mesh(Base):
    __tablename__ = "meshes"

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    mode: Mapped[str] = mapped_column(String(24))  # app.mesh.schemas.Mode
    host_ids: Mapped[list[int]] = mapped_column(JSONType)  # as picked; many_to_one: the clients
    server_host_id: Mapped[int | None] = mapped_column(default=None)  # many_to_one: the one server
    ops: Mapped[list[str]] = mapped_column(JSONType)  # tcp_stream (Mbit/s), tcp_rr (round-trip latency)
    params: Mapped[dict[str, Any]] = mapped_column(JSONType)  # the network_pair params shared by every job, less op
    rounds: Mapped[int] = mapped_column(Integer)
    created_by: Mapped[str | None] = mapped_column(String(64))
    cancelled_by: Mapped[str | None] = mapped_column(String(64))


class MeshJob(Base):
    """One network_pair job of a mesh, and the round it runs in (app.jobs.rounds: no run of round r is handed
    out while a run of an earlier round of the same mesh is queued or running)."""

    __tablename__ = "mesh_jobs"

    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True)
    mesh_id: Mapped[int] = mapped_column(ForeignKey("meshes.id", ondelete="CASCADE"), index=True)
    round: Mapped[int] = mapped_column(Integer)
