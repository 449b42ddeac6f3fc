"""A metric over time: one point per finished run (its row's mean, 95 % CI and verdict), the changes the detector
finds in the valid points, thresholds and events; the fleet's latest headline figures.

A scope is one host or one label (provider, instance_type or region as the run's label snapshot had it); a suite
will be one more kind of scope (Scope), the rest stays as it is."""
import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, case, func, select, true
from sqlalchemy.orm import Session, load_only

from app.core.db import utcnow
from app.core.errors import Conflict, FieldInvalid, NotFound
from app.experiments.registry import RUNS
from app.hosts.models import Host
from app.hosts.service import health_of, is_online
from app.jobs.models import LABEL_KEYS as LABEL_KEYS  # the runs' instance labels, one list (and History's)
from app.jobs.models import WITH_RESULT, Run, RunStatus
from app.results.service import declared_figures
from app.results.verdict import none_usable, usable
from app.trends import detector
from app.trends.models import TrendEvent, TrendThreshold
from app.trends.schemas import (
    ChangePublic,
    EventPublic,
    FleetCell,
    FleetHost,
    FleetMetric,
    FleetPublic,
    Method,
    MetricKey,
    MetricPublic,
    SeriesPoint,
    SeriesPublic,
    ThresholdCreate,
    ThresholdPublic,
)

# Runs that count: finished with a result. An untrusted run's rows are shown (their verdict says why) and never
# used by the detector or the thresholds.
FINISHED = WITH_RESULT
# Runs read from PostgreSQL per batch, and at most per request (a metric may be in few of a scope's runs).
BATCH = 500
MAX_SCAN = 5000


@dataclass(frozen=True)
class Scope:
    """Which runs: those of one host, those whose label snapshot had each label given, both at once (that host
    while it had the label), or, with neither, every host's."""

    host_id: int | None = None
    labels: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def of(host_id: int | None, labels: dict[str, str | None]) -> "Scope":
        return Scope(host_id=host_id, labels=tuple((k, v) for k, v in labels.items() if v is not None))

    @staticmethod
    def of_threshold(t: Any) -> "Scope":
        return Scope(host_id=t.host_id, labels=((t.label_key, t.label_value),) if t.label_key else ())

    def where(self) -> ColumnElement[bool]:
        conds: list[ColumnElement[bool]] = [Run.host_id == self.host_id] if self.host_id is not None else []
        for key, value in self.labels:
            # the labels the run was handed out under (as History filters them); before the snapshot, the host's
            label = case((func.jsonb_typeof(Run.labels_snapshot) == "object", Run.labels_snapshot[key].as_string()),
                         else_=Host.labels[key].as_string())
            conds.append(label == value)
        return and_(true(), *conds)


def direction(experiment: str) -> tuple[str, bool]:
    """(unit, lower_is_better) of a kind's main figure, as its kernel declares its `value` (the one place)."""
    unit = RUNS[experiment].unit if experiment in RUNS else ""
    return unit, declared_figures(experiment).get("value", ("", False))[1]


def check_metric(key: MetricKey) -> None:
    if key.experiment not in RUNS:
        raise FieldInvalid(("query", "experiment"), f"no run kind {key.experiment!r}; one of {sorted(RUNS)}",
                           "enum")


def _runs(session: Session, scope: Scope, experiment: str, before: datetime | None = None,
          after: datetime | None = None) -> Iterator[tuple[Run, Host]]:
    """The scope's finished runs of a kind, newest first, in batches, at most MAX_SCAN."""
    q = (select(Run, Host).join(Host, Host.id == Run.host_id)
                      .options(load_only(Run.id, Run.host_id, Run.experiment, Run.finished_at, Run.result,
                                         Run.labels_snapshot, Run.status))
                      .where(Run.experiment == experiment, Run.status.in_(FINISHED), Run.result.is_not(None),
                             Run.finished_at.is_not(None), scope.where()))
    if before is not None:
        q = q.where(Run.finished_at < before)
    if after is not None:
        q = q.where(Run.finished_at >= after)
    q = q.order_by(Run.finished_at.desc(), Run.id.desc())
    for offset in range(0, MAX_SCAN, BATCH):
        rows = session.execute(q.limit(BATCH).offset(offset)).all()
        yield from ((r, h) for r, h in rows)
        if len(rows) < BATCH:
            return


def row_of(run: Run, key: MetricKey) -> dict[str, Any] | None:
    for row in (run.result or {}).get("rows") or []:
        if (row.get("op") == key.op and row.get("threads") == key.threads
                and row.get("block_bytes") == key.block_bytes):
            return row
    return None


def _finite(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) else None


def verdict_of(run: Run, row: dict[str, Any]) -> str:
    """A stored row's verdict for trends and the fleet view: the row's own, and never "valid" for a run that did
    not succeed (an untrusted run's rows are shown, not counted)."""
    verdict = str(row.get("verdict") or ("valid" if row.get("valid", True) else "invalid"))
    return "invalid" if run.status != RunStatus.succeeded and verdict == "valid" else verdict


def point_of(run: Run, host: Host, row: dict[str, Any]) -> SeriesPoint | None:
    mean = _finite(row.get("mean"))
    if mean is None or run.finished_at is None:
        return None
    verdict = verdict_of(run, row)
    used = usable(verdict)
    reason = None
    if not used:
        # a flag's text may name its verdict already ("disturbed: CPU share 0.41 ..."): said once, not twice
        texts = [str(f["text"]).removeprefix(f"{verdict}: ") for f in row.get("flags") or []
                 if isinstance(f, dict) and f.get("text")]
        reason = f"{verdict}: " + ("; ".join(texts)[:300] if texts else (row.get("invalid_reason") or
                                                                         f"the run is {run.status}"))
    return SeriesPoint(run_id=run.id, host_id=run.host_id, host_name=host.name, at=run.finished_at, mean=mean,
                       ci95_low=_finite(row.get("ci95_low")), ci95_high=_finite(row.get("ci95_high")),
                       n=int(row.get("n") or 0), verdict=verdict, used=used, excluded_reason=reason)


def points(session: Session, scope: Scope, key: MetricKey, limit: int, before: datetime | None = None,
           after: datetime | None = None) -> tuple[list[SeriesPoint], bool]:
    """The newest `limit` points (oldest first), and whether older ones exist."""
    out: list[SeriesPoint] = []
    more = False
    for run, host in _runs(session, scope, key.experiment, before, after):
        row = row_of(run, key)
        p = point_of(run, host, row) if row is not None else None
        if p is None:
            continue
        if len(out) == limit:
            more = True
            break
        out.append(p)
    out.reverse()
    return out, more


def changes(pts: list[SeriesPoint], lower_is_better: bool) -> list[ChangePublic]:
    used = [p for p in pts if p.used]
    out = []
    for c in detector.detect([p.mean for p in used]):
        worse = (c.effect > 0) if lower_is_better else (c.effect < 0)
        first, seen = used[c.index], used[c.detected_at]
        out.append(ChangePublic(run_id=first.run_id, at=first.at, detected_run_id=seen.run_id,
                                kind="regression" if worse else "improvement", before=c.before, after=c.after,
                                effect=c.effect, p_value=c.p_value))
    return out


def method() -> Method:
    return Method(name="Mann-Whitney U (exact, two-sided) between the regime's trailing baseline and the newest "
                       "points, with a minimum relative effect between their medians",
                  baseline_min=detector.BASELINE_MIN, baseline_max=detector.BASELINE_MAX,
                  test_window=detector.TEST_WINDOW, alpha=detector.ALPHA, min_effect=detector.MIN_EFFECT)


def series(session: Session, scope: Scope, key: MetricKey, limit: int, before: datetime | None,
           after: datetime | None) -> SeriesPublic:
    check_metric(key)
    unit, lower = direction(key.experiment)
    pts, more = points(session, scope, key, limit, before, after)
    unit = RUNS[key.experiment].unit_for({"op": key.op}) if key.op else unit
    ths = [threshold_public(t) for t in thresholds_for(session, scope, key)]
    evs = events(session, scope, key, limit=100)[0]
    return SeriesPublic(metric=key, unit=unit, lower_is_better=lower, points=pts, has_more=more,
                        excluded=sum(not p.used for p in pts), changes=changes(pts, lower), method=method(),
                        thresholds=ths, events=evs)


def metrics(session: Session, scope: Scope, experiment: str | None, scan: int) -> tuple[list[MetricPublic], int]:
    """The metrics the scope's newest `scan` finished runs have (of one kind, or every kind)."""
    q = (select(Run, Host).join(Host, Host.id == Run.host_id)
                      .options(load_only(Run.id, Run.experiment, Run.finished_at, Run.result, Run.host_id))
                      .where(Run.status.in_(FINISHED), Run.result.is_not(None), Run.finished_at.is_not(None),
                             scope.where()))
    if experiment is not None:
        q = q.where(Run.experiment == experiment)
    rows = session.execute(q.order_by(Run.finished_at.desc(), Run.id.desc()).limit(scan)).all()
    found: dict[tuple[str, str | None, int, int | None], MetricPublic] = {}
    for run, _ in rows:
        for row in (run.result or {}).get("rows") or []:
            if not isinstance(row.get("threads"), int) or _finite(row.get("mean")) is None:
                continue
            k = (run.experiment, row.get("op"), row["threads"], row.get("block_bytes"))
            if k in found:
                found[k].points += 1
                continue
            _, lower = direction(run.experiment)
            found[k] = MetricPublic(experiment=k[0], op=k[1], threads=k[2], block_bytes=k[3],
                                    unit=str(row.get("unit") or ""), lower_is_better=lower, points=1,
                                    last_at=run.finished_at or utcnow())
    data = sorted(found.values(), key=lambda m: (m.experiment, str(m.op), m.threads, m.block_bytes or 0))
    return data, len(rows)


# -- thresholds -----------------------------------------------------------------------------------------------------

def threshold_public(t: TrendThreshold) -> ThresholdPublic:
    return ThresholdPublic(id=t.id, host_id=t.host_id, label_key=t.label_key, label_value=t.label_value,
                           experiment=t.experiment, op=t.op, threads=t.threads, block_bytes=t.block_bytes,
                           kind=t.kind, value=t.value, created_by=t.created_by,  # type: ignore[arg-type]
                           created_at=t.created_at)


def _metric_where(model: Any, key: MetricKey) -> list[ColumnElement[bool]]:
    return [model.experiment == key.experiment,
            model.op.is_(None) if key.op is None else model.op == key.op,
            model.threads == key.threads,
            model.block_bytes.is_(None) if key.block_bytes is None else model.block_bytes == key.block_bytes]


def thresholds_for(session: Session, scope: Scope, key: MetricKey | None = None) -> list[TrendThreshold]:
    """The thresholds set on exactly this scope (a host, a label, both, or the whole fleet)."""
    q = select(TrendThreshold).where(
        TrendThreshold.host_id.is_(None) if scope.host_id is None else TrendThreshold.host_id == scope.host_id)
    if scope.labels:
        label_key, label_value = scope.labels[0]
        q = q.where(TrendThreshold.label_key == label_key, TrendThreshold.label_value == label_value)
    else:
        q = q.where(TrendThreshold.label_key.is_(None))
    if key is not None:
        q = q.where(*_metric_where(TrendThreshold, key))
    return list(session.scalars(q.order_by(TrendThreshold.id)).all())


MAX_THRESHOLDS = 1000


def create_threshold(session: Session, body: ThresholdCreate, by: str) -> TrendThreshold:
    label_key, label_value = body.label.split("=", 1) if body.label else (None, None)
    if body.host_id is not None and session.get(Host, body.host_id) is None:
        raise NotFound(f"no host {body.host_id}")
    key = MetricKey(experiment=body.experiment, op=body.op, threads=body.threads, block_bytes=body.block_bytes)
    if key.experiment not in RUNS:
        raise FieldInvalid(("body", "experiment"), f"no run kind {key.experiment!r}; one of {sorted(RUNS)}", "enum")
    if (session.scalar(select(func.count()).select_from(TrendThreshold)) or 0) >= MAX_THRESHOLDS:
        raise Conflict(f"there are {MAX_THRESHOLDS} thresholds already; delete some first")
    t = TrendThreshold(host_id=body.host_id, label_key=label_key, label_value=label_value,
                       experiment=key.experiment, op=key.op, threads=key.threads, block_bytes=key.block_bytes,
                       kind=body.kind, value=body.value, created_by=by)
    session.add(t)
    session.flush()
    return t


# -- events ---------------------------------------------------------------------------------------------------------

def event_public(e: TrendEvent, host_name: str) -> EventPublic:
    return EventPublic(id=e.id, at=e.at, run_id=e.run_id, host_id=e.host_id, host_name=host_name,
                       threshold_id=e.threshold_id, experiment=e.experiment, op=e.op, threads=e.threads,
                       block_bytes=e.block_bytes, kind=e.kind, value=e.value, unit=e.unit,  # type: ignore[arg-type]
                       text=e.text, webhook_status=e.webhook_status, webhook_detail=e.webhook_detail,
                       email_status=e.email_status, email_detail=e.email_detail)


def events(session: Session, scope: Scope | None, key: MetricKey | None, limit: int,
           offset: int = 0) -> tuple[list[EventPublic], int]:
    q = select(TrendEvent, Host.name).join(Host, Host.id == TrendEvent.host_id)
    if scope is not None and scope.labels:
        q = q.join(Run, Run.id == TrendEvent.run_id).where(scope.where())
    elif scope is not None and scope.host_id is not None:
        q = q.where(TrendEvent.host_id == scope.host_id)
    if key is not None:
        q = q.where(*_metric_where(TrendEvent, key))
    count = session.scalar(select(func.count()).select_from(q.subquery())) or 0
    rows = session.execute(q.order_by(TrendEvent.at.desc(), TrendEvent.id.desc()).limit(limit).offset(offset)).all()
    return [event_public(e, name) for e, name in rows], count


# -- the fleet --------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Headline:
    key: str
    title: str
    experiment: str
    op: str
    pick: str  # max_threads: the row with most threads; best: the highest mean


HEADLINES = (
    Headline("cpu_fp64", "CPU FP64, most threads", "cpu", "fp64", "max_threads"),
    Headline("memory_copy", "Memory copy, best", "memory", "copy", "best"),
    Headline("disk_seq_read", "Disk sequential read, best", "disk", "seq_read", "best"),
    Headline("tcp_pair", "TCP, two hosts, best", "network_drive", "tcp_stream", "best"),
    Headline("tcp_loopback", "TCP loopback, best", "network", "tcp_stream", "best"),
)
# Among hosts with the same label, a value is an outlier when it lies more than OUTLIER_K robust standard deviations
# (1.4826 x the median absolute deviation) from their median; a group needs at least OUTLIER_MIN_HOSTS hosts.
OUTLIER_K = 3.0
OUTLIER_MIN_HOSTS = 3
OUTLIER_METHOD = (f"median ± {OUTLIER_K:g} × 1.4826 × MAD of the hosts with the same label (at least "
                  f"{OUTLIER_MIN_HOSTS} hosts with a valid figure)")


def _headline_cell(run: Run, h: Headline) -> tuple[FleetCell | None, str | None]:
    """The run's headline cell from its usable rows only (results.verdict.usable: not the 4-thread row on 2 CPUs,
    not a disturbed or page-cache row); else (None, the verdict of the row it would have been) to count why."""
    rows = [r for r in (run.result or {}).get("rows") or []
            if r.get("op") == h.op and _finite(r.get("mean")) is not None and isinstance(r.get("threads"), int)]
    if not rows:
        return None, None
    key = (lambda r: (r["threads"], r["mean"])) if h.pick == "max_threads" else (lambda r: r["mean"])
    ok = [r for r in rows if usable(verdict_of(run, r))]
    if not ok:
        return None, verdict_of(run, max(rows, key=key))
    row = max(ok, key=key)
    assert run.finished_at is not None  # noqa: S101 - selected with finished_at set
    return FleetCell(value=float(row["mean"]), unit=str(row.get("unit") or ""),
                     efficiency=_finite(row.get("efficiency")),
                     run_id=run.id, at=run.finished_at, threads=row["threads"], block_bytes=row.get("block_bytes"),
                     verdict=verdict_of(run, row)), None


def latest_headlines(session: Session, hosts: list[Host]) -> tuple[dict[int, dict[str, FleetCell]],
                                                                   dict[int, dict[str, str]]]:
    """Each host's newest finished run with a usable headline figure: its cell; and, where none of its newest
    LOOKBACK runs has one, why ("no valid run yet; 3 disturbed")."""
    out: dict[int, dict[str, FleetCell]] = {h.id: {} for h in hosts}
    left: dict[int, dict[str, list[str]]] = {h.id: {} for h in hosts}
    ids = list(out)
    if not ids:
        return out, {}
    for h in HEADLINES:
        # the newest LOOKBACK finished runs of the kind per host; the first with a usable row of the op wins
        ranked = (select(Run.id, func.row_number().over(partition_by=Run.host_id,
                                                         order_by=(Run.finished_at.desc(), Run.id.desc())).label("k"))
                  .where(Run.experiment == h.experiment, Run.status.in_(FINISHED), Run.result.is_not(None),
                         Run.finished_at.is_not(None), Run.host_id.in_(ids)).subquery())
        runs = session.scalars(select(Run).join(ranked, ranked.c.id == Run.id).where(ranked.c.k <= LOOKBACK)
                               .options(load_only(Run.id, Run.host_id, Run.finished_at, Run.result, Run.status))
                               .order_by(Run.finished_at.desc(), Run.id.desc())).all()
        for run in runs:
            if h.key in out[run.host_id]:
                continue
            cell, why = _headline_cell(run, h)
            if cell is not None:
                out[run.host_id][h.key] = cell
            elif why is not None:
                left[run.host_id].setdefault(h.key, []).append(why)
    missing = {host: {key: none_usable(v) for key, v in by_key.items() if key not in out[host]}
               for host, by_key in left.items()}
    return out, missing


LOOKBACK = 20


def mark_outliers(hosts: list[FleetHost], group_by: str) -> None:
    groups: dict[tuple[str, str], list[FleetCell]] = {}
    for host in hosts:
        label = host.labels.get(group_by)
        if not label:
            continue
        for key, cell in host.cells.items():
            if usable(cell.verdict):
                groups.setdefault((label, key), []).append(cell)
    for (label, _), cells in groups.items():
        if len(cells) < OUTLIER_MIN_HOSTS:
            continue
        values = [c.value for c in cells]
        med = detector.median(values)
        mad = detector.median([abs(v - med) for v in values]) * 1.4826
        if mad <= 0:
            continue
        for c in cells:
            z = (c.value - med) / mad
            if abs(z) > OUTLIER_K:
                c.outlier = True
                c.outlier_note = (f"{z:+.1f} robust SD from the median {med:.4g} {c.unit} of the {len(cells)} hosts "
                                  f"labelled {group_by}={label}")


def fleet(session: Session, group_by: str) -> FleetPublic:
    hosts = list(session.scalars(select(Host).where(Host.deleted_at.is_(None)).order_by(Host.name, Host.id)).all())
    cells, missing = latest_headlines(session, hosts)
    out = [FleetHost(host_id=h.id, name=h.name, online=is_online(h),
                     labels={k: str(v) for k, v in (h.labels or {}).items() if k in LABEL_KEYS and v},
                     cells=cells[h.id], missing=missing.get(h.id, {}), health=health_of(h)) for h in hosts]
    mark_outliers(out, group_by)
    metrics = [FleetMetric(key=h.key, title=h.title, unit=RUNS[h.experiment].unit_for({"op": h.op}),
                           lower_is_better=direction(h.experiment)[1]) for h in HEADLINES]
    return FleetPublic(metrics=metrics, hosts=out, outlier_method=OUTLIER_METHOD, group_by=group_by)  # type: ignore[arg-type]
