"""Start a suite on hosts: plan its jobs (hostbench_common.suites.plan), validate each as the API validates a job
body, create them all in one transaction (all or none: the admission caps count every run), and read or cancel
the suite run as one unit."""
from typing import Any

from hostbench_common.estimate import host_facts, run_typical
from hostbench_common.experiments import EXPERIMENTS
from hostbench_common.suites import BUILTIN, HostInfo, Item, Suite, expected_duration, job_duration, plan
from pydantic import TypeAdapter, ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.config import get_settings
from app.core.db import utcnow
from app.core.errors import Conflict, Forbidden, NotFound, Unprocessable
from app.hosts.models import Host
from app.jobs import service as jobs
from app.jobs import turns
from app.jobs.models import ACTIVE, Job, Run, RunStatus, SuiteRun
from app.jobs.schemas import JobCreate
from app.suites.models import SavedSuite
from app.suites.schemas import (
    SavedSuiteIn,
    SuiteEstimate,
    SuiteItemPublic,
    SuitePublic,
    SuiteRunPublic,
    SuiteRunRun,
    SuiteStatus,
)

_BODY: TypeAdapter[Any] = TypeAdapter(JobCreate)


SAVED = "saved-"  # a saved suite's id in the API: saved-<row id>


def suite_public(s: Suite, created_by: str | None = None) -> SuitePublic:
    one, _ = plan(s.items, [HostInfo(0)])
    return SuitePublic(id=s.id, title=s.title, description=s.description,
                       items=[SuiteItemPublic(experiment=i.experiment, params=dict(i.params), needs=i.needs)
                              for i in s.items],
                       expected_duration_one_host_s=round(expected_duration(one), 1),
                       builtin=not s.id.startswith(SAVED), created_by=created_by)


def _as_suite(row: SavedSuite) -> Suite:
    return Suite(f"{SAVED}{row.id}", row.title, row.description,
                 tuple(Item(i["experiment"], dict(i.get("params") or {}), i.get("needs")) for i in row.items))


def saved_row(session: Session, suite_id: str) -> SavedSuite | None:
    if not suite_id.startswith(SAVED) or not suite_id[len(SAVED):].isdigit() or len(suite_id) > 24:
        return None
    return session.get(SavedSuite, int(suite_id[len(SAVED):]))


def get_suite(suite_id: str, session: Session | None = None) -> Suite:
    s = BUILTIN.get(suite_id)
    if s is None and session is not None:
        row = saved_row(session, suite_id)
        s = _as_suite(row) if row is not None else None
    if s is None:
        raise NotFound(f"suite {suite_id!r} not found; the built-in suites are {', '.join(sorted(BUILTIN))}")
    return s


def all_suites(session: Session) -> list[SuitePublic]:
    saved = session.scalars(select(SavedSuite).order_by(SavedSuite.id)).all()
    return [suite_public(s) for s in BUILTIN.values()] + [suite_public(_as_suite(r), r.created_by) for r in saved]


def check_items(body: SavedSuiteIn) -> list[dict[str, Any]]:
    """Every item must be a job body the API accepts (on one host, or two for a two-host experiment) and within the
    job duration limit: a saved suite that could not run is refused when saved, naming the item."""
    out = []
    limit = get_settings().max_job_duration_s
    for i, item in enumerate(body.items):
        e = EXPERIMENTS.get(item.experiment)
        if e is None:
            raise Unprocessable(f"items[{i}].experiment: unknown experiment {item.experiment!r}; the experiments are "
                                f"{', '.join(sorted(EXPERIMENTS))}")
        try:
            job = _BODY.validate_python({"host_ids": list(range(1, e.hosts + 1)), "experiment": item.experiment,
                                         "params": item.params})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first.get("loc", ()) if x not in (item.experiment,))
            raise Unprocessable(f"items[{i}] ({item.experiment}): {where}: {first.get('msg')}") from None
        took = job_duration(item.experiment, job.params.model_dump())
        if took > limit:
            raise Unprocessable(f"items[{i}] ({item.experiment}) would take {took:.0f} s; a job may take at most "
                                f"{limit:.0f} s")
        out.append({"experiment": item.experiment, "params": dict(item.params), "needs": item.needs})
    return out


def save(session: Session, body: SavedSuiteIn, by: str | None) -> SavedSuite:
    row = SavedSuite(title=body.title, description=body.description, items=check_items(body), created_by=by)
    session.add(row)
    session.commit()
    return row


def editable(session: Session, suite_id: str, name: str, is_admin: bool) -> SavedSuite:
    if suite_id in BUILTIN:
        raise Conflict(f"suite {suite_id!r} is built in: save a copy of it (POST /api/suites) to change it")
    row = saved_row(session, suite_id)
    if row is None:
        raise NotFound(f"suite {suite_id!r} not found")
    if row.created_by != name and not is_admin:
        raise Forbidden(f"suite {suite_id!r} is {row.created_by}'s: only its owner or an admin may change it")
    return row


def update(session: Session, row: SavedSuite, body: SavedSuiteIn) -> SavedSuite:
    row.items = check_items(body)
    row.title, row.description, row.updated_at = body.title, body.description, utcnow()
    session.commit()
    return row


def public_of(row: SavedSuite) -> SuitePublic:
    return suite_public(_as_suite(row), row.created_by)


def _picked(host_ids: list[int], peer_host_id: int | None) -> list[int]:
    """The hosts a suite run (or its estimate) names, the peer last; 422 for a host listed twice, or picked as a
    host and as the peer."""
    if len(set(host_ids)) != len(host_ids):
        raise Unprocessable("host_ids: a host is listed twice")
    if peer_host_id is not None and peer_host_id in host_ids:
        raise Unprocessable(f"peer_host_id: host {peer_host_id} is picked too; the peer only serves the two-host "
                            "items, pick it as a host or as the peer")
    return [*host_ids, *([peer_host_id] if peer_host_id is not None else [])]


def start(session: Session, suite_id: str, host_ids: list[int], created_by: str | None,
          peer_host_id: int | None = None) -> SuiteRun:
    suite = get_suite(suite_id, session)
    wanted = _picked(host_ids, peer_host_id)
    hosts = {h.id: h for h in session.scalars(select(Host).where(Host.id.in_(wanted)))}
    for i, host_id in enumerate(wanted):
        h = hosts.get(host_id)
        if h is None or h.revoked_at is not None or h.deleted_at is not None:
            where = f"host_ids[{i}]" if i < len(host_ids) else "peer_host_id"
            raise Unprocessable(f"{where}: host {host_id} is not a registered host")
    peer = HostInfo(peer_host_id, hosts[peer_host_id].inventory) if peer_host_id is not None else None
    planned, skipped = plan(suite.items, [HostInfo(h, hosts[h].inventory) for h in host_ids], peer)
    if not planned:
        raise Unprocessable(f"suite {suite_id!r} has nothing to run on these hosts: {'; '.join(skipped)}")
    bodies = []
    for j in planned:
        try:
            bodies.append(_BODY.validate_python({"host_ids": j.host_ids, "experiment": j.experiment,
                                                 "params": j.params}))
        except ValidationError as exc:  # a built-in suite the API refuses is our bug: say which item
            raise Unprocessable(f"suite {suite_id!r}: {j.experiment} job refused: {exc.errors()[:1]}") from exc
    # hosts of one machine go one after another (app.jobs.turns); hosts of different machines at once
    in_turn = turns.plan([hosts[h] for h in host_ids])
    run = SuiteRun(suite=suite.id, title=suite.title, host_ids=list(host_ids), peer_host_id=peer_host_id,
                   skipped=skipped, turns=list(in_turn) or None,
                   expected_duration_s=round(expected_duration(planned), 1), created_by=created_by)
    session.add(run)
    session.flush()
    for body in bodies:  # one transaction: a refusal (caps, duration) leaves no job behind
        jobs.create_job(session, body, created_by, commit=False, suite_run_id=run.id)
    session.commit()
    return run


def estimate(session: Session, suite_id: str, host_ids: list[int], peer_host_id: int | None) -> SuiteEstimate:
    """The suite's typical time on these hosts and its cap: each job on each host it measures on (a two-host job on
    its driving host; the serving one waits as long), from the hosts' inventories (CPUs, RAM)."""
    suite = get_suite(suite_id, session)
    ids = _picked(host_ids, peer_host_id)
    hosts = {h.id: h for h in session.scalars(select(Host).where(Host.id.in_(ids), Host.deleted_at.is_(None)))}
    if len(hosts) != len(ids):
        raise NotFound(f"host {next(i for i in ids if i not in hosts)} not found")
    peer = HostInfo(peer_host_id, hosts[peer_host_id].inventory) if peer_host_id is not None else None
    planned, _ = plan(suite.items, [HostInfo(h, hosts[h].inventory) for h in host_ids], peer)
    per_host: dict[int, float] = {}
    for j in planned:
        e = EXPERIMENTS[j.experiment]
        on = j.host_ids[-1:] if e.hosts > 1 else j.host_ids
        for h in on:
            per_host[h] = per_host.get(h, 0.0) + e.typical_duration(j.params, **host_facts(hosts[h].inventory))
    # hosts of one machine are measured one after another: their times add up (app.jobs.turns)
    typical = max([*per_host.values(), *(sum(per_host.get(h, 0.0) for h in t["hosts"])
                                         for t in turns.plan([hosts[h] for h in host_ids]))], default=0.0)
    return SuiteEstimate(typical_s=round(typical, 1),
                         cap_s=round(expected_duration(planned), 1),
                         per_host={h: round(v, 1) for h, v in per_host.items()})


def runs_of(session: Session, suite_run_id: int) -> list[Run]:
    """Every run of a suite run, in id order (its progress, its cancel, its report)."""
    return list(session.scalars(select(Run).join(Job, Job.id == Run.job_id)
                                .where(Job.suite_run_id == suite_run_id).order_by(Run.id)))


def get(session: Session, suite_run_id: int) -> SuiteRun:
    run = session.get(SuiteRun, suite_run_id)
    if run is None:
        raise NotFound(f"suite run {suite_run_id} not found")
    return run


def public(session: Session, sr: SuiteRun) -> SuiteRunPublic:
    runs = runs_of(session, sr.id)
    done = [r for r in runs if r.status not in ACTIVE]
    on = {r.host_id for r in runs}
    hosts = {h.id: h for h in session.scalars(select(Host).where(Host.id.in_(on)))}
    inventories = {i: h.inventory for i, h in hosts.items()}
    typical = {r.id: run_typical(r.experiment, r.params, r.inventory_snapshot or inventories.get(r.host_id))
               for r in runs}
    per_host: dict[int, float] = {}
    for r in runs:
        per_host[r.host_id] = per_host.get(r.host_id, 0.0) + (typical[r.id] or 0.0)
    statuses = {r.status for r in runs}
    status: SuiteStatus = "running" if len(done) < len(runs) else "cancelled" if RunStatus.cancelled in statuses else \
        "failed" if statuses & {RunStatus.failed, RunStatus.untrusted} else "succeeded"
    return SuiteRunPublic(
        id=sr.id, suite=sr.suite, title=sr.title, created_at=sr.created_at, created_by=sr.created_by,
        cancelled_by=sr.cancelled_by, host_ids=sr.host_ids, peer_host_id=sr.peer_host_id, skipped=sr.skipped,
        expected_duration_s=sr.expected_duration_s,
        typical_duration_s=round(max(per_host.values()), 1) if per_host else None,
        status=status, runs_total=len(runs), runs_done=len(done),
        progress=round(len(done) / len(runs), 4) if runs else 1.0,
        runs=[SuiteRunRun(id=r.id, job_id=r.job_id, host_id=r.host_id, experiment=r.experiment,
                          op=r.params.get("op") if isinstance(r.params.get("op"), str) else None,
                          status=RunStatus(r.status), expected_duration_s=r.expected_duration_s,
                          typical_duration_s=typical[r.id], started_at=r.started_at, finished_at=r.finished_at,
                          **_ending(r))
              for r in runs])


def _ending(run: Run) -> dict[str, str | None]:
    """A finished run's headline text and verdict, as stored when it finished (app.jobs.stored): nothing is
    recomputed on a read."""
    if run.status in ACTIVE or not run.result:
        return {"headline": None, "verdict": None}
    text = run.headline.get("text") if isinstance(run.headline, dict) else None
    return {"headline": text if isinstance(text, str) else None, "verdict": run.verdict}


def cancel(session: Session, sr: SuiteRun, by: str | None) -> list[int]:
    """Cancel every run of the suite still queued or running (each as a run's own cancel does); the hosts to ring."""
    ids = [r.id for r in runs_of(session, sr.id) if r.status in ACTIVE]
    sr.cancelled_by = by
    session.commit()
    hosts = []
    for run_id in ids:
        run = jobs.cancel_run(session, run_id, by)
        hosts.append(run.host_id)
    return sorted(set(hosts))


def recent(session: Session, limit: int) -> list[SuiteRun]:
    return list(session.scalars(select(SuiteRun).order_by(SuiteRun.id.desc()).limit(limit)))
