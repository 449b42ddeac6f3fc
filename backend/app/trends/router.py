"""Trends: a metric over time for a host or a label, its changes, thresholds and events; the fleet's headline figures;
the same figures for Prometheus (GET /api/metrics). Who may call each route: docs/security.md."""
from typing import Annotated

from fastapi import APIRouter, Body, Query, Request, Response
from hostbench_common import resultfields
from sqlalchemy import select

from app.audit.service import record
from app.core.bounds import LIST_PAGE_MAX, Id
from app.core.deps import SessionDep
from app.core.errors import FieldInvalid, NotFound
from app.experiments.registry import RunExperimentKind
from app.jobs.schemas import IsoDatetime
from app.runner_api.schemas import BLOCK_BYTES
from app.trends import exposition, notify, service
from app.trends.models import TrendThreshold
from app.trends.schemas import (
    EventsPublic,
    FleetPublic,
    LabelKey,
    MetricKey,
    MetricsPublic,
    NotifyPublic,
    NotifyUpdate,
    SeriesPublic,
    ThresholdCreate,
    ThresholdPublic,
    ThresholdsPublic,
)
from app.users.auth import AdminDep, OperatorDep, ViewerDep

router = APIRouter(prefix="/api", tags=["trends"])

Label = Annotated[str | None, Query(min_length=1, max_length=64, pattern=r"^[^\x00]*$")]
Op = Annotated[str | None, Query(min_length=1, max_length=32, pattern=r"^[a-z0-9_]+$")]
# As the kernels declare a result's threads (hostbench_common.resultfields), a block size as the API takes one.
Threads = Annotated[int, Query(ge=resultfields.THREADS[0], le=resultfields.THREADS[1])]
Block = Annotated[int | None, Query(ge=BLOCK_BYTES[0], le=BLOCK_BYTES[1])]


def _scope(host_id: int | None, provider: str | None, instance_type: str | None, region: str | None) -> service.Scope:
    return service.Scope.of(host_id, {"provider": provider, "instance_type": instance_type, "region": region})


@router.get("/trends/metrics", response_model=MetricsPublic)
def read_metrics(_: ViewerDep, session: SessionDep, host_id: Id | None = None, provider: Label = None,
                 instance_type: Label = None, region: Label = None, experiment: RunExperimentKind | None = None,
                 scan: Annotated[int, Query(ge=1, le=1000, description="newest finished runs looked at")] = 300,
                 ) -> MetricsPublic:
    data, scanned = service.metrics(session, _scope(host_id, provider, instance_type, region), experiment, scan)
    return MetricsPublic(data=data, runs_scanned=scanned)


@router.get("/trends/series", response_model=SeriesPublic)
def read_series(_: ViewerDep, session: SessionDep, experiment: RunExperimentKind, threads: Threads,
                host_id: Id | None = None, provider: Label = None, instance_type: Label = None, region: Label = None,
                op: Op = None, block_bytes: Block = None,
                limit: Annotated[int, Query(ge=2, le=1000, description="newest points returned")] = 200,
                before: IsoDatetime | None = None, after: IsoDatetime | None = None) -> SeriesPublic:
    key = MetricKey(experiment=experiment, op=op, threads=threads, block_bytes=block_bytes)
    return service.series(session, _scope(host_id, provider, instance_type, region), key, limit, before, after)


@router.get("/trends/events", response_model=EventsPublic)
def read_events(_: ViewerDep, session: SessionDep, host_id: Id | None = None,
                limit: Annotated[int, Query(ge=1, le=LIST_PAGE_MAX)] = 50,
                offset: Annotated[int, Query(ge=0, le=10**6)] = 0) -> EventsPublic:
    scope = service.Scope(host_id=host_id) if host_id is not None else None
    data, count = service.events(session, scope, None, limit, offset)
    return EventsPublic(data=data, count=count)


@router.get("/trends/thresholds", response_model=ThresholdsPublic)
def read_thresholds(_: ViewerDep, session: SessionDep, host_id: Id | None = None, provider: Label = None,
                    instance_type: Label = None, region: Label = None) -> ThresholdsPublic:
    if host_id is None and provider is None and instance_type is None and region is None:
        rows = list(session.scalars(select(TrendThreshold).order_by(TrendThreshold.id).limit(1000)).all())
    else:
        rows = service.thresholds_for(session, _scope(host_id, provider, instance_type, region))[:1000]
    return ThresholdsPublic(data=[service.threshold_public(t) for t in rows], count=len(rows))


ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}


@router.post("/trends/thresholds", response_model=ThresholdPublic, status_code=201,
             responses={404: {"description": "no such host", "content": ERROR},
                        409: {"description": "too many thresholds already", "content": ERROR}})
def create_threshold(body: Annotated[ThresholdCreate, Body()], p: OperatorDep, session: SessionDep) -> ThresholdPublic:
    t = service.create_threshold(session, body, p.name)
    record(session, p.name, "trend.threshold.create", f"threshold {t.id}", **body.model_dump(mode="json"))
    session.commit()
    return service.threshold_public(t)


@router.delete("/trends/thresholds/{threshold_id}", status_code=204)
def delete_threshold(threshold_id: Id, p: OperatorDep, session: SessionDep) -> Response:
    t = session.get(TrendThreshold, threshold_id)
    if t is None:
        raise NotFound(f"no threshold {threshold_id}")
    session.delete(t)
    record(session, p.name, "trend.threshold.delete", f"threshold {threshold_id}")
    session.commit()
    return Response(status_code=204)


def _notify_public(session: SessionDep) -> NotifyPublic:
    from app.core.config import get_settings

    cfg = notify.notify_config(session)
    return NotifyPublic(webhook_url=cfg.webhook_url if cfg else None, email_to=cfg.email_to if cfg else None,
                        smtp_configured=notify.smtp_note() is None, email_note=notify.smtp_note(),
                        allowed_hosts=sorted(get_settings().webhook_allowed_hosts),
                        updated_by=cfg.updated_by if cfg else None, updated_at=cfg.updated_at if cfg else None)


@router.get("/trends/notifications", response_model=NotifyPublic)
def read_notifications(_: AdminDep, session: SessionDep) -> NotifyPublic:
    return _notify_public(session)


@router.put("/trends/notifications", response_model=NotifyPublic)
def update_notifications(body: Annotated[NotifyUpdate, Body()], p: AdminDep, session: SessionDep) -> NotifyPublic:
    if body.webhook_url:
        try:
            notify.check_url(body.webhook_url)
        except notify.Refused as exc:
            raise FieldInvalid(("body", "webhook_url"), str(exc), "webhook_refused") from None
    notify.set_config(session, body.webhook_url, body.email_to, p.name)
    record(session, p.name, "trend.notify.update", "notifications", webhook=bool(body.webhook_url),
           email=bool(body.email_to))
    session.commit()
    return _notify_public(session)


@router.get("/trends/fleet", response_model=FleetPublic)
def read_fleet(_: ViewerDep, session: SessionDep, group_by: LabelKey = "instance_type") -> FleetPublic:
    return service.fleet(session, group_by)


@router.get("/metrics", response_class=Response,
            responses={200: {"content": {exposition.CONTENT_TYPE: {}, exposition.OPENMETRICS: {}}}})
def read_prometheus(request: Request, _: ViewerDep, session: SessionDep) -> Response:
    """The latest headline figure per host as gauges: OpenMetrics when the scraper's Accept names
    application/openmetrics-text, else the Prometheus text format. Scrape with a viewer's personal API token
    (`Authorization: Bearer hbpat_…`, Prometheus' `authorization: {credentials_file: …}`)."""
    body, content_type = exposition.render(service.fleet(session, "instance_type"), request.headers.get("accept", ""))
    return Response(body, headers={"Content-Type": content_type, "Vary": "Accept"})
