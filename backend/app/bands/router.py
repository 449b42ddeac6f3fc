"""Expected bands: read them (any signed-in person), set, remove and import them (operators and admins), export
them as the file a team keeps in git, see the learned band of a host's figure with its basis. docs/security.md."""
from typing import Annotated

from fastapi import APIRouter, Query

from app.audit.service import record
from app.bands import service
from app.bands.schemas import (
    KIND_MAX,
    KIND_PATTERN,
    OP_MAX,
    THREADS_MAX,
    THREADS_MIN,
    BandIn,
    BandPublic,
    BandRemove,
    BandsFile,
    BandsPublic,
    FigureKey,
    ImportOutcome,
    LearnedPublic,
)
from app.core.bounds import MAX_BYTES, Id
from app.core.deps import SessionDep
from app.core.errors import NotFound
from app.experiments.registry import RunExperimentKind
from app.hosts.models import Host
from app.hosts.schemas import LABEL_KEY, LABEL_KEY_MAX
from app.trends.service import direction
from app.users.auth import OperatorDep, ViewerDep

router = APIRouter(prefix="/api", tags=["bands"])

# the query's bounds are the bodies' (app.bands.schemas), not a second copy
KindQ = Annotated[str | None, Query(min_length=3, max_length=KIND_MAX, pattern=KIND_PATTERN)]
KindReq = Annotated[str, Query(min_length=3, max_length=KIND_MAX, pattern=KIND_PATTERN)]
KindByQ = Annotated[str, Query(min_length=1, max_length=LABEL_KEY_MAX, pattern=LABEL_KEY)]
Op = Annotated[str | None, Query(min_length=1, max_length=OP_MAX, pattern=r"^[a-z0-9_]+$")]
ThreadsQ = Annotated[int, Query(ge=THREADS_MIN, le=THREADS_MAX)]
BlockQ = Annotated[int | None, Query(ge=0, le=MAX_BYTES)]


@router.get("/bands", response_model=BandsPublic)
def read_bands(_: ViewerDep, session: SessionDep, kind: KindQ = None,
               experiment: RunExperimentKind | None = None) -> BandsPublic:
    """Every declared band as it stands (its newest version), of one kind or experiment if asked."""
    return BandsPublic(data=[service.public(b) for b in service.current(session, kind, experiment)])


@router.get("/bands/versions", response_model=BandsPublic)
def read_band_versions(_: ViewerDep, session: SessionDep, kind: KindReq,
                       experiment: RunExperimentKind, threads: ThreadsQ, op: Op = None,
                       block_bytes: BlockQ = None) -> BandsPublic:
    """Every version of one band, newest first (a removal is a version): what a verdict's band version was."""
    key = FigureKey(experiment=experiment, op=op, threads=threads, block_bytes=block_bytes)
    return BandsPublic(data=[service.public(b) for b in service.versions(session, kind, key)])


@router.put("/bands", response_model=BandPublic)
def set_band(body: BandIn, p: OperatorDep, session: SessionDep) -> BandPublic:
    """Declare a band (a new version of it; the same band again adds none)."""
    row, changed = service.set_band(session, body, p.name)
    if changed:
        record(session, p.name, "band.set", f"band {body.kind} {body.experiment}", version=row.version,
               op=body.op, threads=body.threads)
    session.commit()
    return service.public(row)


@router.post("/bands/remove", response_model=BandPublic)
def remove_band(body: BandRemove, p: OperatorDep, session: SessionDep) -> BandPublic:
    """Remove a declared band: a version that says so (its figures fall back to a learned band)."""
    row = service.remove_band(session, body, p.name)
    record(session, p.name, "band.remove", f"band {body.kind} {body.experiment}", version=row.version)
    session.commit()
    return service.public(row)


@router.get("/bands/export", response_model=BandsFile)
def export_bands(_: ViewerDep, session: SessionDep, kind: KindQ = None) -> BandsFile:
    """Every declared band as one file (POST it to /api/bands/import; `./hostbench bands export` writes YAML)."""
    return BandsFile(bands=[service.as_in(b) for b in service.current(session, kind)])


@router.post("/bands/import", response_model=ImportOutcome)
def import_bands(body: BandsFile, p: OperatorDep, session: SessionDep,
                 replace: Annotated[bool, Query(description="remove the declared bands the file lacks")] = False,
                 ) -> ImportOutcome:
    """Set every band of a file: a new version only where one differs; all or none."""
    out = service.import_bands(session, body.bands, replace, p.name)
    record(session, p.name, "band.import", "bands", **out.model_dump())
    session.commit()
    return out


@router.get("/bands/learned", response_model=LearnedPublic)
def read_learned(_: ViewerDep, session: SessionDep, host_id: Id, experiment: RunExperimentKind,
                 threads: ThreadsQ, op: Op = None,
                 block_bytes: BlockQ = None,
                 kind_by: KindByQ = service.CPU, peer_host_id: Id | None = None) -> LearnedPublic:
    """The band a host's figure would be learned against now, with its basis (which hosts, which runs, when); a
    two-host figure's against `peer_host_id` (the siblings' runs to that peer only)."""
    host = session.get(Host, host_id)
    if host is None or host.deleted_at is not None:
        raise NotFound(f"host {host_id} not found")
    key = FigureKey(experiment=experiment, op=op, threads=threads, block_bytes=block_bytes)
    kind = next((k for k in service.kinds_of(host, kind_by) if k.split("=", 1)[0] == kind_by), None)
    if kind is None:
        return LearnedPublic(host_id=host_id, kind="", figure=key, band=None,
                             reason=f"host {host.name} has no kind {kind_by!r}")
    unit = direction(experiment)[0]
    band, why = service.learned(service.Baselines(session), host, key, kind, unit, peer=peer_host_id)
    return LearnedPublic(host_id=host_id, kind=kind, figure=key, band=band, reason=why)
