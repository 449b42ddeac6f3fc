"""The hosts list at fleet size (issue 32): search, filters, sort and paging done by PostgreSQL over the stored rows
(the inventory is JSONB: its CPU model, cores and memory are read by index expressions, not by loading every
inventory into Python), so a page of 50 out of 1,000 hosts builds 50 HostPublic, not 1,000. The facets (statuses,
CPU models, labels with their counts) feed the dashboard's filter menus; the ETag lets a poll that changed nothing
cost a 304 and no body."""
import hashlib
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from fastapi import Request, Response
from pydantic import BaseModel
from sqlalchemy import Numeric, String, and_, case, cast, func, literal_column, or_, select, type_coerce
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from app.core.config import get_settings
from app.core.db import utcnow
from app.hosts.models import Host
from app.hosts.schemas import LABEL_KEY_PART, LABEL_VALUE_MAX

HostSort = Literal["id", "name", "status", "cpu", "cores", "memory", "last_seen", "registered"]
HostStatus = Literal["online", "offline", "revoked"]
Order = Literal["asc", "desc"]
# A label filter is key=value: the key as token labels take it, the value as long as a label's
# (app.hosts.schemas, their one definition).
LABEL_FILTER = rf"^{LABEL_KEY_PART}=.{{0,{LABEL_VALUE_MAX}}}$"
LABEL_FILTERS_MAX = 8


@dataclass(frozen=True)
class HostQuery:
    q: str | None = None
    labels: tuple[str, ...] = ()
    status: HostStatus | None = None
    cpu: str | None = None
    sort: HostSort = "id"
    order: Order = "asc"


def _inventory() -> Any:
    return type_coerce(Host.inventory, JSONB)


def _labels() -> Any:
    return type_coerce(Host.labels, JSONB)


def _cpu() -> Any:
    return _inventory()["cpu"]


def cpu_model() -> ColumnElement[str]:
    """The CPU model as the card shows it (inventory.cpu.model, else model_name)."""
    return func.coalesce(_cpu()["model"].astext, _cpu()["model_name"].astext)


def _json_num(expr: Any) -> ColumnElement[Any]:
    """A JSON number as an integer, NULL when it is not a number (a runner's free-form inventory)."""
    return case((func.jsonb_typeof(expr) == "number", cast(expr.astext, Numeric)), else_=None)


def cores() -> ColumnElement[Any]:
    per_socket = _json_num(_cpu()["cores_per_socket"])
    return func.coalesce(_json_num(_cpu()["cores"]), per_socket * func.coalesce(_json_num(_cpu()["sockets"]), 1))


def memory_bytes() -> ColumnElement[Any]:
    return _json_num(_inventory()["memory"]["total_bytes"])


def _online_since() -> Any:
    return utcnow() - timedelta(seconds=get_settings().runner_online_s)


def status_rank() -> ColumnElement[int]:
    """online 0, offline 1, revoked 2: the order the status column sorts in."""
    return case((Host.revoked_at.is_not(None), 2),
                (and_(Host.last_seen_at.is_not(None), Host.last_seen_at >= _online_since()), 0), else_=1)


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _where(query: HostQuery) -> list[ColumnElement[bool]]:
    conds: list[ColumnElement[bool]] = [Host.deleted_at.is_(None)]
    if query.q:
        like = f"%{_escape_like(query.q.strip())}%"
        conds.append(or_(Host.name.ilike(like, escape="\\"), Host.hostname.ilike(like, escape="\\"),
                         cpu_model().ilike(like, escape="\\"), cast(_labels(), String).ilike(like, escape="\\"),
                         Host.address.ilike(like, escape="\\")))
    for pair in query.labels:
        key, value = pair.split("=", 1)
        conds.append(_labels().contains({key: value}))
    if query.status == "revoked":
        conds.append(Host.revoked_at.is_not(None))
    elif query.status == "online":
        conds += [Host.revoked_at.is_(None), Host.last_seen_at >= _online_since()]
    elif query.status == "offline":
        conds += [Host.revoked_at.is_(None), or_(Host.last_seen_at.is_(None), Host.last_seen_at < _online_since())]
    if query.cpu:
        conds.append(cpu_model() == query.cpu)
    return conds


def _order(query: HostQuery) -> list[Any]:
    key: Any = {"id": Host.id, "name": func.lower(Host.name), "status": status_rank(), "cpu": cpu_model(),
                "cores": cores(), "memory": memory_bytes(), "last_seen": Host.last_seen_at,
                "registered": Host.registered_at}[query.sort]
    first = key.desc().nulls_last() if query.order == "desc" else key.asc().nulls_last()
    return [first, Host.id]


def list_hosts(session: Session, query: HostQuery, limit: int, offset: int) -> tuple[list[Host], int]:
    """One page of the hosts that match, and how many match in all."""
    conds = _where(query)
    count = session.scalar(select(func.count()).select_from(Host).where(*conds)) or 0
    rows = session.scalars(select(Host).where(*conds).order_by(*_order(query)).limit(limit).offset(offset))
    return list(rows), count


class Facet(BaseModel):
    value: str
    count: int


class LabelFacet(BaseModel):
    key: str
    value: str
    count: int


class HostFacets(BaseModel):
    """What the filters can pick from, over every host not deleted, with how many hosts each would show."""
    count: int
    statuses: dict[str, int]
    cpus: list[Facet]
    labels: list[LabelFacet]


FACETS_MAX = 200


def facets(session: Session) -> HostFacets:
    live = Host.deleted_at.is_(None)
    rank = status_rank()
    statuses = {("online", "offline", "revoked")[r]: n
                for r, n in session.execute(select(rank, func.count()).where(live).group_by(rank))}
    model = cpu_model()
    cpus = [Facet(value=v, count=n) for v, n in session.execute(
        select(model, func.count()).where(live, model.is_not(None)).group_by(model)
        .order_by(func.count().desc(), model).limit(FACETS_MAX))]
    pair = func.jsonb_each_text(_labels()).table_valued("key", "value")
    labels = [LabelFacet(key=k, value=v, count=n) for k, v, n in session.execute(
        select(pair.c.key, pair.c.value, func.count()).select_from(Host).join(pair, literal_column("true"))
        .where(live, func.jsonb_typeof(_labels()) == "object", pair.c.value != "")
        .group_by(pair.c.key, pair.c.value).order_by(pair.c.key, func.count().desc(), pair.c.value)
        .limit(FACETS_MAX))]
    return HostFacets(count=sum(statuses.values()), statuses={s: statuses.get(s, 0) for s in ("online", "offline",
                                                                                               "revoked")},
                      cpus=cpus, labels=labels)


def etagged(request: Request, model: BaseModel) -> Response:
    """The body with its ETag; a request whose If-None-Match names it gets 304 and no body (the browser sends it
    by itself: `Cache-Control: no-cache` makes it revalidate every time)."""
    body = model.model_dump_json().encode()
    tag = f'W/"{hashlib.sha256(body).hexdigest()[:32]}"'
    headers = {"ETag": tag, "Cache-Control": "private, no-cache", "Vary": "Cookie, Authorization"}
    sent = request.headers.get("if-none-match", "")
    if tag in (t.strip() for t in sent.split(",")):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)


