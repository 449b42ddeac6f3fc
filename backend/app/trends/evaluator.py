"""Newly finished runs, looked at once each (Celery beat, app.worker.tasks.evaluate_trends; never inside ingest): a
valid row that crosses a threshold set for its host or one of its labels, or at which the detector finds a change
in its host's series, records an event (trend_events); its notifications go out from another task."""
from datetime import timedelta
from typing import Any

from hostbench_common.axes import coordinates, experiment_title
from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from app.core.db import utcnow
from app.hosts.models import Host
from app.jobs.models import Run, RunStatus
from app.results.verdict import usable
from app.trends import detector
from app.trends.models import TrendCheck, TrendEvent, TrendThreshold
from app.trends.notify import initial_statuses, notify_config
from app.trends.schemas import MetricKey
from app.trends.service import FINISHED, LABEL_KEYS, Scope, changes, direction, points, row_of

# Runs that finished longer ago than this are not looked at (a server upgraded into this feature does not page
# anyone about last year); at most PER_PASS runs per pass, the next pass goes on.
HORIZON = timedelta(days=2)
PER_PASS = 50
MAX_ROWS = 64  # rows of one run looked at
DROP_BASELINE = 10  # a drop_pct threshold compares with the median of this many previous valid points
SERIES_POINTS = detector.BASELINE_MAX + detector.TEST_WINDOW + 10


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _where(key: MetricKey, host: Host) -> str:
    """'node-3 Network (two hosts): tcp_stream, 1 B messages, 1 stream' (hostbench_common.axes)."""
    return f"{host.name} {experiment_title(key.experiment)}: " + coordinates(key.experiment, key.op, key.threads,
                                                                              key.block_bytes)


def _threshold_events(session: Session, run: Run, host: Host, key: MetricKey, mean: float, unit: str,
                      lower: bool, ths: list[TrendThreshold]) -> list[TrendEvent]:
    out = []
    for t in ths:
        if (t.experiment, t.op, t.threads, t.block_bytes) != (key.experiment, key.op, key.threads, key.block_bytes):
            continue
        text = None
        if t.kind == "below" and mean < t.value:
            text = f"{_where(key, host)}: {_fmt(mean)} {unit} is below the threshold {_fmt(t.value)} {unit}"
        elif t.kind == "above" and mean > t.value:
            text = f"{_where(key, host)}: {_fmt(mean)} {unit} is above the threshold {_fmt(t.value)} {unit}"
        elif t.kind == "drop_pct":
            scope = Scope.of_threshold(t)
            assert run.finished_at is not None  # noqa: S101 - selected so
            prev, _ = points(session, scope, key, DROP_BASELINE * 3, before=run.finished_at)
            base = [p.mean for p in prev if p.used][-DROP_BASELINE:]
            if len(base) >= 3:
                ref = detector.median(base)
                worse = (mean / ref - 1) if lower else (1 - mean / ref)
                if ref > 0 and worse * 100 > t.value:
                    text = (f"{_where(key, host)}: {_fmt(mean)} {unit} is {worse:.1%} worse than the median "
                            f"{_fmt(ref)} {unit} of its previous {len(base)} valid runs (threshold {t.value:g} %)")
        if text:
            out.append(TrendEvent(run_id=run.id, host_id=run.host_id, threshold_id=t.id, experiment=key.experiment,
                                  op=key.op, threads=key.threads, block_bytes=key.block_bytes, kind="threshold",
                                  value=mean, unit=unit[:16], text=text[:1000]))
    return out


def _change_event(session: Session, run: Run, host: Host, key: MetricKey, unit: str, lower: bool) -> TrendEvent | None:
    """An event when the detector, on the host's series up to this run, finds a change that this run completed."""
    assert run.finished_at is not None  # noqa: S101 - selected so
    pts, _ = points(session, Scope(host_id=run.host_id), key, SERIES_POINTS,
                    before=run.finished_at + timedelta(microseconds=1))
    if not pts or pts[-1].run_id != run.id:
        return None
    found = [c for c in changes(pts, lower) if c.detected_run_id == run.id]
    if not found:
        return None
    c = found[-1]
    text = (f"{_where(key, host)}: {c.kind}, the median moved {c.effect:+.1%} from {_fmt(c.before)} to "
            f"{_fmt(c.after)} {unit} (Mann-Whitney p = {c.p_value:.2g}) from run {c.run_id} on")
    return TrendEvent(run_id=run.id, host_id=run.host_id, experiment=key.experiment, op=key.op, threads=key.threads,
                      block_bytes=key.block_bytes, kind=c.kind, value=c.after, unit=unit[:16], text=text[:1000])


def evaluate_run(session: Session, run: Run, host: Host) -> list[TrendEvent]:
    labels = run.labels_snapshot if isinstance(run.labels_snapshot, dict) else (host.labels or {})
    mine = [(k, str(labels[k])) for k in LABEL_KEYS if labels.get(k)]
    q = select(TrendThreshold).where(TrendThreshold.experiment == run.experiment)
    # a threshold on this host, on a label it had for this run, on both, or on the whole fleet (neither)
    ths = [t for t in session.scalars(q).all()
           if t.host_id in (None, run.host_id) and (t.label_key is None or (t.label_key, t.label_value) in mine)]
    _, lower = direction(run.experiment)
    out: list[TrendEvent] = []
    rows: list[dict[str, Any]] = ((run.result or {}).get("rows") or [])[:MAX_ROWS]
    for row in rows:
        if not isinstance(row.get("threads"), int) or not isinstance(row.get("mean"), int | float):
            continue
        if run.status != RunStatus.succeeded or not usable(row.get("verdict") or "valid"):
            continue  # shown in the series, never judged
        key = MetricKey(experiment=run.experiment, op=row.get("op"), threads=row["threads"],
                        block_bytes=row.get("block_bytes"))
        if row_of(run, key) is not row:
            continue
        unit = str(row.get("unit") or "")
        out += _threshold_events(session, run, host, key, float(row["mean"]), unit, lower, ths)
        e = _change_event(session, run, host, key, unit, lower)
        if e is not None:
            out.append(e)
    return out


def evaluate_pending(session: Session, limit: int = PER_PASS) -> list[int]:
    """Look at finished runs not looked at yet (oldest first); the ids of the events to notify."""
    q = (select(Run, Host).join(Host, Host.id == Run.host_id)
         .where(Run.status.in_(FINISHED), Run.result.is_not(None), Run.finished_at >= utcnow() - HORIZON,
                ~exists().where(TrendCheck.run_id == Run.id))
         .order_by(Run.finished_at, Run.id).limit(limit).with_for_update(of=Run, skip_locked=True))
    rows = session.execute(q).all()
    if not rows:
        session.rollback()
        return []
    cfg = notify_config(session)
    (hook, hook_why), (mail, mail_why) = initial_statuses(cfg)
    new: list[TrendEvent] = []
    for run, host in rows:
        for e in evaluate_run(session, run, host):
            e.webhook_status, e.webhook_detail, e.email_status, e.email_detail = hook, hook_why, mail, mail_why
            session.add(e)
            new.append(e)
        session.add(TrendCheck(run_id=run.id))
    session.commit()
    return [e.id for e in new if "pending" in (e.webhook_status, e.email_status)]
