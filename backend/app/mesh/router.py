"""Hosts tested together: all pairs in rounds, or many clients to one server; the matrix as JSON or CSV.
Starting or cancelling one is creating or cancelling jobs (operators and admins); reading it is a viewer's."""
from typing import Annotated

from fastapi import APIRouter, Query, Response

from app.audit.service import record
from app.core.bounds import Id
from app.core.deps import SessionDep
from app.jobs.doorbell import ring
from app.mesh import service
from app.mesh.schemas import MeshCreate, MeshesPublic, MeshPublic
from app.users.auth import OperatorDep, ViewerDep

router = APIRouter(prefix="/api", tags=["meshes"])


@router.post("/meshes", response_model=MeshPublic, status_code=201)
def create_mesh(body: MeshCreate, p: OperatorDep, session: SessionDep) -> MeshPublic:
    """Test hosts together: every pair's network_pair jobs (all pairs) or every client's drive run to one server
    (many to one), created at once or not at all, run in rounds (docs/reliability.md, rule 8)."""
    mesh = service.create(session, body, p.name)
    record(session, p.name, "mesh.create", f"mesh {mesh.id}", mode=body.mode, host_ids=body.host_ids,
           server_host_id=body.server_host_id)
    session.commit()
    for host_id in sorted({*body.host_ids, *([body.server_host_id] if body.server_host_id else [])}):
        ring(host_id)
    return service.public(session, mesh)


@router.get("/meshes", response_model=MeshesPublic)
def read_meshes(_: ViewerDep, session: SessionDep, limit: Annotated[int, Query(ge=1, le=100)] = 20) -> MeshesPublic:
    """The recent meshes, newest first, light: each cell's status, no figures (GET /api/meshes/{id} has them)."""
    return MeshesPublic(data=[service.public(session, m, figures=False) for m in service.recent(session, limit)])


@router.get("/meshes/{mesh_id}", response_model=MeshPublic)
def read_mesh(mesh_id: Id, _: ViewerDep, session: SessionDep) -> MeshPublic:
    """The mesh and its matrix: each link's Mbit/s and round-trip latency, its verdict, the slowest link and host."""
    return service.public(session, service.get(session, mesh_id))


@router.get("/meshes/{mesh_id}/export", response_class=Response,
            responses={200: {"content": {"text/csv": {}, "application/json": {}}}, 404: {}})
def export_mesh(mesh_id: Id, _: ViewerDep, session: SessionDep,
                format: Annotated[str, Query(pattern="^(csv|json)$")] = "csv") -> Response:
    m = service.public(session, service.get(session, mesh_id))
    body, media = (m.model_dump_json(indent=1), "application/json") if format == "json" else \
        (service.to_csv(m), "text/csv")
    name = f"hostbench-mesh-{mesh_id}.{format}"
    return Response(body, media_type=media, headers={"Content-Disposition": f'attachment; filename="{name}"'})


@router.post("/meshes/{mesh_id}/cancel", response_model=MeshPublic, status_code=202)
def cancel_mesh(mesh_id: Id, p: OperatorDep, session: SessionDep) -> MeshPublic:
    """Cancel every run of the mesh still queued or running."""
    mesh = service.get(session, mesh_id)
    hosts = service.cancel(session, mesh, p.name)
    record(session, p.name, "mesh.cancel", f"mesh {mesh.id}")
    session.commit()
    for host_id in hosts:
        ring(host_id)
    return service.public(session, service.get(session, mesh_id))
