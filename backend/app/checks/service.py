"""Health checks: a suite started on N hosts as one suite run, then each host judged once its runs have ended.

A host's verdict, from every row of every run it measured in the check (a two-host item: the driving host's):
- FAIL: a valid figure lies outside its band (declared, else learned; app.bands.service.judge);
- DISTURBED: no valid figure failed, but some measurement was not valid (a row whose verdict is not usable:
  disturbed, oversubscribed, unstable, ...; or a run that did not succeed): rerun it, do not blame the host;
- PASS: every figure valid and inside its band (figures without a band are listed, not counted against it; so are
  the figures not judged: a disk or network row the host's own CPU quota throttled measured the quota, whose
  CPU figures are judged, not the device or the link: `cpu_bound`);
- NO_BASELINE: nothing could be judged (no band, too few siblings).
The verdict is written to the host (hosts.health, per suite) and, when it changed, a webhook goes out (the trends'
notification target and delivery, app.trends.notify) from the Celery pass that judges (never from a request)."""
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit.service import record
from app.bands.schemas import FigureKey
from app.bands.service import Baselines, inside, judge, peer_of
from app.checks.models import HealthCheck, HostVerdict
from app.checks.schemas import (
    MAX_HOSTS,
    VERDICTS,
    CheckCreate,
    CheckPublic,
    Figure,
    FleetHealth,
    FleetHealthHost,
    HostVerdictPublic,
)
from app.core.db import utcnow
from app.core.errors import HostbenchError, NotFound, Unavailable, Unprocessable
from app.experiments.registry import ROLE_OF
from app.hosts import slurm
from app.hosts.models import Host
from app.hosts.service import health_of
from app.jobs import turns
from app.jobs.models import ACTIVE, Run, RunStatus, SuiteRun
from app.results.verdict import usable
from app.suites import service as suites
from app.trends import notify
from app.trends.service import direction, verdict_of

ORDER = {"fail": 0, "disturbed": 1, "no_baseline": 2, "not_judged": 3, "pass": 4}
# A row's verdict that says the figure is not the one its experiment stands for, but not that the measurement
# went wrong: listed with the host's figures, never counted for or against it.
NOT_JUDGED = {"cpu_bound"}
WEBHOOK_TRIES = 3


def _label_hosts(session: Session, label: str) -> list[int]:
    key, _, value = label.partition("=")
    hosts = session.scalars(select(Host).where(Host.deleted_at.is_(None), Host.revoked_at.is_(None))
                            .order_by(Host.id)).all()
    return [h.id for h in hosts if str((h.labels or {}).get(key, "")) == value]


def start(session: Session, body: CheckCreate, by: str | None) -> HealthCheck:
    host_ids = list(body.host_ids) if body.host_ids is not None else _label_hosts(session, body.label or "")
    if not host_ids:
        raise Unprocessable(f"label: no live host is labelled {body.label}")
    if len(host_ids) > MAX_HOSTS:
        raise Unprocessable(f"{len(host_ids)} hosts; a check runs on at most {MAX_HOSTS} at once")
    sr = suites.start(session, body.suite, host_ids, by, body.peer_host_id)  # commits its jobs, or raises
    check = HealthCheck(suite=sr.suite, title=sr.title, suite_run_id=sr.id, host_ids=host_ids, label=body.label,
                        kind_by=body.kind_by, created_by=by, drain_on_fail=body.drain_on_fail)
    session.add(check)
    session.flush()
    return check


def get(session: Session, check_id: int) -> HealthCheck:
    c = session.get(HealthCheck, check_id)
    if c is None:
        raise NotFound(f"health check {check_id} not found")
    return c


def _runs(session: Session, check: HealthCheck) -> list[Run]:
    return suites.runs_of(session, check.suite_run_id) if check.suite_run_id is not None else []


def _where(run: Run, row: dict[str, Any]) -> FigureKey:
    return FigureKey(experiment=run.experiment, op=row.get("op"), threads=int(row["threads"]),
                     block_bytes=row.get("block_bytes"))


def _why_not_valid(run: Run, row: dict[str, Any], verdict: str) -> str:
    texts = [str(f["text"]) for f in row.get("flags") or [] if isinstance(f, dict) and f.get("text")]
    why = "; ".join(texts)[:400] if texts else f"the run is {run.status}"
    return why if why.startswith(f"{verdict}:") else f"{verdict}: {why}"  # a flag's text may name it already


def _not_judged(run: Run, row: dict[str, Any], verdict: str) -> str:
    text = next((str(f["text"]) for f in row.get("flags") or [] if isinstance(f, dict) and f.get("kind") == verdict
                 and f.get("text")), verdict)
    return f"{text[:400]}; not judged as a {run.experiment.replace('_', ' ')} figure"


def best_repeat(row: dict[str, Any], lower_is_better: bool) -> float | None:
    """A row's best measured repeat (None with fewer than two): a check FAILs a figure only when every repeat is past
    its bound, so that one slow phase of a noisy figure (a disk's 2-s write on a shared device) does not fail a
    host whose other phase was inside (docs/methodology/verdicts.md, "A host's verdict")."""
    values = [float(v) for v in row.get("values") or [] if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(values) < 2:
        return None
    return min(values) if lower_is_better else max(values)


def judge_host(session: Session, host: Host, runs: list[Run], kind_by: str,
               baselines: Baselines) -> tuple[str, list[Figure], str]:
    """(verdict, figures worst first, the reason in words) of one host from its runs in a check."""
    figures: list[Figure] = []
    for run in runs:
        if ROLE_OF.get(run.experiment) == "serve":
            continue  # the serving side of a pair: its peer's figures are the pair's
        if run.status != RunStatus.succeeded or not run.result:
            figures.append(Figure(status="disturbed", run_id=run.id,
                                  figure=FigureKey(experiment=run.experiment, op=run.params.get("op")
                                                   if isinstance(run.params.get("op"), str) else None, threads=1,
                                                   block_bytes=None),
                                  value=None, unit=direction(run.experiment)[0],
                                  reason=f"the run {run.status}: {(run.status_reason or '')[:300]}".rstrip(": ")))
            continue
        for row in (run.result or {}).get("rows") or []:
            mean = row.get("mean")
            if not isinstance(row.get("threads"), int) or not isinstance(mean, int | float):
                continue
            key, unit = _where(run, row), str(row.get("unit") or "")
            v = verdict_of(run, row)
            if v in NOT_JUDGED:
                figures.append(Figure(status="not_judged", run_id=run.id, figure=key, value=float(mean), unit=unit,
                                      reason=_not_judged(run, row, v)))
                continue
            if not usable(v):
                figures.append(Figure(status="disturbed", run_id=run.id, figure=key, value=float(mean), unit=unit,
                                      reason=_why_not_valid(run, row, v)))
                continue
            peak = (row.get("peak") or {}).get("value") if isinstance(row.get("peak"), dict) else None
            j = judge(session, host, key, float(mean), unit=unit, peak=peak, kind_by=kind_by, baselines=baselines,
                      peer=peer_of(run))
            status, reason = j.status, j.reason
            best = best_repeat(row, direction(run.experiment)[1])
            if status == "fail" and best is not None and j.band is not None and inside(j.band, best):
                status, reason = "pass", (f"{reason}; its mean is past the bound, but its best repeat ({best:.4g} "
                                          f"{j.unit}) is inside: a figure fails when every repeat does")
            figures.append(Figure(status=status, run_id=run.id, figure=key, value=j.value, unit=j.unit,
                                  band=j.band, distance=j.distance if status == "fail" else 0.0, reason=reason))
    figures.sort(key=lambda f: (ORDER[f.status], f.distance or 0.0))
    counts = {s: sum(f.status == s for f in figures) for s in ORDER}
    if not figures:
        return "NO_BASELINE", figures, "nothing was measured on this host in the check"
    if counts["fail"]:
        return "FAIL", figures, f"{counts['fail']} figure(s) outside their band"
    if counts["disturbed"]:
        return "DISTURBED", figures, (f"{counts['disturbed']} measurement(s) not valid: rerun them; no valid figure "
                                      "is outside its band")
    if counts["pass"]:
        extra = f"; {counts['no_baseline']} without a band" if counts["no_baseline"] else ""
        if counts["not_judged"]:
            extra += f"; {counts['not_judged']} not judged (CPU-bound: the host's CPU quota)"
        return "PASS", figures, f"{counts['pass']} figure(s) inside their band{extra}"
    return "NO_BASELINE", figures, figures[0].reason


def _counts(figures: list[Figure]) -> dict[str, int]:
    return {s: sum(f.status == s for f in figures) for s in ORDER}


def judge_check(session: Session, check_id: int) -> bool:
    """Judge a check whose suite run has ended (once: under a row lock); True when it was judged now."""
    check = session.get(HealthCheck, check_id, with_for_update={"skip_locked": True})
    if check is None or check.judged_at is not None:
        session.rollback()
        return False
    runs = _runs(session, check)
    if any(r.status in ACTIVE for r in runs):
        session.rollback()
        return False
    now = utcnow()
    cfg = notify.notify_config(session)
    (hook, hook_why), _ = notify.initial_statuses(cfg)
    baselines = Baselines(session)
    failed: list[tuple[Host, str]] = []
    hosts = {h.id: h for h in session.scalars(select(Host).where(Host.id.in_(check.host_ids)))}
    for host_id in check.host_ids:
        host = hosts.get(host_id)
        if host is None:
            continue
        verdict, figures, reason = judge_host(session, host, [r for r in runs if r.host_id == host_id],
                                              check.kind_by, baselines)
        health = dict(host.health or {})
        previous = (health.get(check.suite) or {}).get("verdict")
        changed = previous != verdict and (previous is not None or verdict == "FAIL")
        session.add(HostVerdict(check_id=check.id, host_id=host_id, suite=check.suite, verdict=verdict,
                                previous=previous, judged_at=now,
                                figures={"reason": reason, "counts": _counts(figures),
                                         "figures": [f.model_dump(mode="json") for f in figures]},
                                webhook_status=hook if changed else "skipped",
                                webhook_detail=hook_why if changed else "the verdict did not change"))
        health[check.suite] = {"verdict": verdict, "at": now.isoformat(), "check_id": check.id}
        host.health = health
        if verdict == "FAIL":
            failed.append((host, reason))
    check.judged_at = now
    session.commit()
    if check.drain_on_fail:
        for host, reason in failed:
            _drain(session, check, host, reason)
    return True


def _drain(session: Session, check: HealthCheck, host: Host, reason: str) -> None:
    """Drain a FAILed host's Slurm node with the check's reason (app.hosts.slurm.drain audits every attempt); a
    host that is no Slurm node, or a server where draining is off, is audited as not drained, with why."""
    words = " ".join(f"hostbench {check.suite} check {check.id}: FAIL, {reason}".split())[:200]
    try:
        slurm.drain(session, host, words, check.created_by or "hostbench")
    except HostbenchError as exc:
        session.rollback()
        if not isinstance(exc, Unavailable):  # scontrol's own failure is audited by drain
            record(session, check.created_by or "hostbench", "host.slurm_drain", f"host {host.name}",
                   host_id=host.id, reason=words, ok=False, error=str(exc.detail)[:300])
            session.commit()


def judge_pending(session: Session, limit: int = 20) -> list[int]:
    """Judge the checks whose suite runs have ended (Celery beat); the ids judged."""
    ids = session.scalars(select(HealthCheck.id).where(HealthCheck.judged_at.is_(None))
                          .order_by(HealthCheck.id).limit(limit)).all()
    session.rollback()
    return [i for i in ids if judge_check(session, i)]


def payload(v: HostVerdict, host_name: str) -> dict[str, Any]:
    fails = [f for f in (v.figures.get("figures") or []) if f.get("status") == "fail"]
    return {"type": "hostbench.host_verdict", "id": v.id, "at": v.judged_at.isoformat(), "check_id": v.check_id,
            "suite": v.suite, "host": {"id": v.host_id, "name": host_name}, "verdict": v.verdict,
            "previous": v.previous, "reason": v.figures.get("reason"), "failures": fails[:20]}


def deliver_webhooks(session: Session, limit: int = 50) -> int:
    """Send the pending verdict-change webhooks (to the trends' webhook URL); the number tried."""
    rows = session.scalars(select(HostVerdict).where(HostVerdict.webhook_status == "pending")
                           .order_by(HostVerdict.id).limit(limit).with_for_update(skip_locked=True)).all()
    cfg = notify.notify_config(session)
    for v in rows:
        if cfg is None or not cfg.webhook_url:
            v.webhook_status, v.webhook_detail = "skipped", "no webhook URL is set"
            continue
        host = session.get(Host, v.host_id)
        v.webhook_tries += 1
        o = notify.post_webhook(cfg.webhook_url, payload(v, host.name if host else str(v.host_id)),
                                final=v.webhook_tries >= WEBHOOK_TRIES)
        v.webhook_status, v.webhook_detail = o.status, o.detail[:500]
    session.commit()
    return len(rows)


# -- reading ---------------------------------------------------------------------------------------------------------

def public(session: Session, check: HealthCheck) -> CheckPublic:
    if check.judged_at is None:
        judge_check(session, check.id)
        session.refresh(check)
    sr = session.get(SuiteRun, check.suite_run_id) if check.suite_run_id is not None else None
    suite_status = suites.public(session, sr).status if sr is not None else None
    names = dict(session.execute(select(Host.id, Host.name).where(Host.id.in_(check.host_ids))).all())
    verdicts = {v.host_id: v for v in session.scalars(select(HostVerdict).where(HostVerdict.check_id == check.id))}
    in_turn = sr.turns if sr is not None else None
    hosts = []
    for host_id in check.host_ids:
        v = verdicts.get(host_id)
        said = turns.words(in_turn, host_id, names)
        if v is None:
            hosts.append(HostVerdictPublic(host_id=host_id, host_name=names.get(host_id, str(host_id)),
                                           verdict="PENDING", reason="its runs have not all ended", in_turn=said))
            continue
        hosts.append(HostVerdictPublic(
            host_id=host_id, host_name=names.get(host_id, str(host_id)), verdict=v.verdict,  # type: ignore[arg-type]
            in_turn=said,
            previous=v.previous, judged_at=v.judged_at, reason=str(v.figures.get("reason") or ""),
            counts=v.figures.get("counts") or {}, figures=[Figure(**f) for f in v.figures.get("figures") or []],
            webhook_status=v.webhook_status, webhook_detail=v.webhook_detail))
    rank = {k: i for i, k in enumerate((*VERDICTS, "PENDING"))}
    hosts.sort(key=lambda h: (rank[h.verdict], h.host_name))
    counts = {k: sum(h.verdict == k for h in hosts) for k in (*VERDICTS, "PENDING")}
    return CheckPublic(id=check.id, suite=check.suite, title=check.title, suite_run_id=check.suite_run_id,
                       suite_status=suite_status, label=check.label, kind_by=check.kind_by,
                       drain_on_fail=check.drain_on_fail,
                       created_by=check.created_by, created_at=check.created_at, judged_at=check.judged_at,
                       status="judged" if check.judged_at else "running", counts=counts, hosts=hosts)


def recent(session: Session, limit: int) -> list[HealthCheck]:
    return list(session.scalars(select(HealthCheck).order_by(HealthCheck.id.desc()).limit(limit)))


def fleet(session: Session) -> FleetHealth:
    hosts = session.scalars(select(Host).where(Host.deleted_at.is_(None)).order_by(Host.name, Host.id)).all()
    out = []
    for h in hosts:
        checks = health_of(h)
        out.append(FleetHealthHost(host_id=h.id, host_name=h.name, latest=checks[0] if checks else None,
                                   checks=checks))
    counts: dict[str, int] = {k: sum(1 for h in out if h.latest and h.latest.verdict == k) for k in VERDICTS}
    counts["none"] = sum(1 for h in out if h.latest is None)
    return FleetHealth(counts=counts, hosts=out)
