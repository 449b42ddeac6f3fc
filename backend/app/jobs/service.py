from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from hostbench_common import hostfit
from hostbench_common.estimate import host_facts, reference_plans, run_typical, runs
from sqlalchemy import ColumnElement, Select, any_, func, select, union_all
from sqlalchemy.orm import Session, defer

from app.core import broker, readcache
from app.core.bounds import SAMPLES_PAGE_MAX, human_duration
from app.core.config import get_settings
from app.core.db import utcnow
from app.core.errors import Conflict, FieldInvalid, NotFound, TooMany, Unprocessable
from app.core.etag import tag_of
from app.experiments.registry import EXPERIMENTS, ROLE_OF, RUNS, SERVE_SLACK_S, expected_duration
from app.hosts.models import Host
from app.jobs import pairing, rounds, samples, stored, turns
from app.jobs.doorbell import ring
from app.jobs.models import (
    ACTIVE,
    LABEL_KEYS,
    ON_HOST,
    TERMINAL,
    Job,
    Run,
    RunStatus,
    may_move,
    snapshot_label,
)
from app.jobs.schemas import (
    JobCreateBase,
    JobEstimate,
    JobPublic,
    ReferenceEstimate,
    RunFilter,
    RunPublic,
    RunsPublic,
    SamplePublic,
)
from app.results.service import unit_for


def progress(run: Run, typical_s: float | None = None) -> float:
    """Elapsed over the run's typical time (else its cap), below 1 until it ended."""
    if run.status in TERMINAL:
        return 1.0
    expected = typical_s or run.expected_duration_s
    if run.started_at is None or expected <= 0:
        return 0.0
    elapsed = (utcnow() - run.started_at).total_seconds()
    return max(0.0, min(0.99, elapsed / expected))


def run_to_public(run: Run, host_name: str, created_by: str | None = None, host: Host | None = None, *,
                  full: bool = True) -> RunPublic:
    """A run as the API shows it. Its result is the stored one (app.jobs.stored): nothing is computed here. A list
    (full=False) carries the stored headline and verdict and leaves the result's rows out."""
    typical = run_typical(run.experiment, run.params, run.inventory_snapshot or (host.inventory if host else None))
    return RunPublic(
        id=run.id, job_id=run.job_id, host_id=run.host_id, host_name=host_name, experiment=run.experiment,
        # only what applies to it: a run stored before runs were stored so keeps no STREAM blocks in any summary
        params=RUNS[run.experiment].applying(run.params) if run.experiment in RUNS else run.params,
        status=run.status, status_reason=run.status_reason,  # type: ignore[arg-type]
        attempt=run.attempt, created_at=run.created_at, started_at=run.started_at, finished_at=run.finished_at,
        expected_duration_s=run.expected_duration_s, typical_duration_s=typical,
        phase=run.phase if run.status in ON_HOST else None,  # type: ignore[arg-type]
        progress=progress(run, typical), last_seq=run.last_seq,
        unit=unit_for(run.experiment, run.params), kernel_info=run.kernel_info,
        result=stored.stored_result(run) if full else None,
        headline=run.headline, verdict=run.verdict,  # type: ignore[arg-type]
        result_updating=stored.updating(run, host),
        labels_snapshot=run.labels_snapshot, created_by=created_by, cancelled_by=run.cancelled_by,
    )


def run_public(session: Session, run: Run) -> RunPublic:
    row = session.execute(select(Host, Job.created_by).join(Job, Job.id == run.job_id)
                          .where(Host.id == run.host_id)).first()
    return run_to_public(run, row[0].name if row else "?", row[1] if row else None, row[0] if row else None)


def run_etag(session: Session, run: Run) -> str | None:
    """An ended run's tag, from what its answer is made of (its state, its stored result's basis, its host's name and
    peaks version); None for a run still going (its progress moves with the clock: tagged by its answer)."""
    if run.status not in TERMINAL:
        return None
    row = session.execute(select(Host.name, Host.peaks_version).where(Host.id == run.host_id)).first()
    return tag_of("run", run.id, run.status, run.status_reason, run.attempt, run.last_seq, run.finished_at,
                  run.cancelled_by, run.result_basis, run.result_stale, run.labels_snapshot,
                  tuple(row) if row else None, stored.RESULT_CODE)


def publish_run(session: Session, run: Run) -> None:
    """A run's state changed (started, ended, cancelled): its watchers are told, and every API process drops the
    reads it keeps (app.core.readcache) first, so that a page that re-reads on this event gets the new state."""
    body = run_public(session, run).model_dump(mode="json")
    readcache.changed_everywhere()
    broker.publish(broker.run_channel(run.id), {"type": "run", "run": body})


# Job admission is serialised by this transaction-scoped PostgreSQL advisory lock: the counts below and the
# insert that follows them cannot interleave with another request's, whichever API process it reached.
ADMISSION_LOCK = 0x6862_6A6F  # "hbjo"


def check_duration(body: JobCreateBase) -> float:
    """A job's expected duration, or a 422 naming the field when it is over the limit."""
    limit = get_settings().max_job_duration_s
    expected = expected_duration(body.experiment, body.params)
    if expected <= limit:
        return expected
    # one phase (a trace): its duration_s is the field to change; else the params as a whole
    one_phase = not EXPERIMENTS[body.experiment].terms()["per_item"]
    loc: tuple[str, ...] = ("body", "params", "duration_s") if one_phase else ("body", "params")
    raise FieldInvalid(loc, f"this job would run for about {human_duration(expected)} ({expected:.0f} s, from its "
                            f"thread counts, configurations, repeats, duration_s and warmup_s); the limit is "
                            f"{human_duration(limit)} ({limit:.0f} s, MAX_JOB_DURATION_S)", "job_too_long")


def estimate(session: Session, body: JobCreateBase) -> JobEstimate:
    """The job's typical time on the slowest of its hosts (their inventories: CPUs, RAM), and its cap."""
    e = EXPERIMENTS[body.experiment]
    params = body.params.model_dump(mode="json")
    hosts = {h.id: h for h in session.scalars(select(Host).where(Host.id.in_(body.host_ids)))}
    missing = [i for i in body.host_ids if i not in hosts]
    if missing:
        raise NotFound(f"host {missing[0]} not found")
    measured_on = body.host_ids[-1:] if e.hosts > 1 else body.host_ids  # two hosts: the driving one's time
    best: tuple[float, list[ReferenceEstimate]] = (0.0, [])
    for host_id in measured_on:
        facts = host_facts(hosts[host_id].inventory)
        typical = e.typical_duration(params, **facts)
        if typical >= best[0]:
            refs = [ReferenceEstimate(tool=p.tool, what=p.what, typical_s=p.typical_s)
                    for one in e.split(params) for p in runs(reference_plans(e.params_of, one, **facts))]
            best = (typical, refs)
    return JobEstimate(typical_s=best[0], cap_s=expected_duration(body.experiment, body.params), references=best[1])


def check_hosts_fit(body: JobCreateBase, hosts: list[Host]) -> None:
    """A 422 naming the host when a picked host's inventory says it cannot run the experiment at all (a GPU job on a
    host with no GPU), or the parameter it cannot run (an ISA its CPU lacks, a GPU device it does not have)."""
    e = EXPERIMENTS[body.experiment]
    params = body.params.model_dump(mode="json")
    for i, host in enumerate(hosts):
        why = hostfit.host_refusal(RUNS[e.roles[min(i, len(e.roles) - 1)][1]], host.inventory, host.name)
        if why is not None:
            raise FieldInvalid(("body", "host_ids", i), why, "host_lacks")
        # a serving run takes none of the job's parameters (many to one: every host after the first drives)
        if e.hosts > 1 and e.roles[min(i, len(e.roles) - 1)][1] != e.params_of:
            continue
        for one in e.split(params):
            found = hostfit.refusal(e.run, one, host.inventory, host.name)
            if found is not None:
                raise FieldInvalid(("body", "params", found[0]), found[1], "host_lacks")


def _retry_after(session: Session, created_by: str | None) -> int:
    """Seconds until the soonest of the (person's, else everyone's) running runs is expected to end."""
    q = select(Run.started_at, Run.expected_duration_s).where(Run.status == RunStatus.running)
    mine = q.join(Job, Job.id == Run.job_id).where(Job.created_by == created_by)
    rows = session.execute(mine).all() or session.execute(q).all()
    now = utcnow()
    left = [(s + timedelta(seconds=d) - now).total_seconds() for s, d in rows if s is not None]
    return int(min(3600, max(5, min(left, default=30))))


def runs_of(body: JobCreateBase) -> int:
    """How many runs the job makes: one per host, times one per item of a fan_out list (op: [...])."""
    return len(body.host_ids) * len(EXPERIMENTS[body.experiment].split(body.params.model_dump()))


def admit(session: Session, body: JobCreateBase, created_by: str | None) -> None:
    """The active-run caps (server-wide and per person): 429 with Retry-After, race-free (ADMISSION_LOCK)."""
    s = get_settings()
    wanted = runs_of(body)
    session.execute(select(func.pg_advisory_xact_lock(ADMISSION_LOCK)))
    active = session.scalar(select(func.count()).select_from(Run).where(Run.status.in_(ACTIVE))) or 0
    if active + wanted > s.max_active_jobs:
        raise TooMany(f"{active} runs are already queued or running on this server (limit {s.max_active_jobs}); "
                      "wait or cancel some", _retry_after(session, None))
    mine = session.scalar(select(func.count()).select_from(Run).join(Job, Job.id == Run.job_id)
                          .where(Run.status.in_(ACTIVE), Job.created_by == created_by)) or 0
    if mine + wanted > s.max_active_runs_per_user:
        raise TooMany(f"{created_by or 'you'} already has {mine} runs queued or running (limit "
                      f"{s.max_active_runs_per_user} per person); wait or cancel some",
                      _retry_after(session, created_by))


def refuse_unused(experiment: str, params: dict[str, Any], given: set[str]) -> None:
    """A parameter given that no run of the job would use (`blocks` with op stream_triad, `sizes` with op copy) is
    refused, naming what it applies to, rather than stored and shown beside a run it never touched."""
    kind = EXPERIMENTS[experiment]
    runs = kind.split(params)
    for p in kind.run.params:
        applies = kind.run.applies_of(p)
        if applies and p.name in given and not any(kind.run.applies_to(p, one, {}) for one in runs):
            where = "; ".join(f"{k} {', '.join(map(str, v))}" for k, v in applies.items())
            now = "; ".join(f"{k} {params.get(k)}" for k in applies)
            raise FieldInvalid(("body", "params", p.name),
                               f"{p.name} does not apply to {now} (only to {where}): leave it out")


def create_job(session: Session, body: JobCreateBase, created_by: str | None = None, *, commit: bool = True,
               suite_run_id: int | None = None) -> Job:
    """The job and its runs. commit=False leaves the transaction (and ADMISSION_LOCK) open for a caller that
    makes several jobs at once (app.suites: all of a suite's jobs, or none)."""
    expected_s = check_duration(body)
    hosts = {h.id: h for h in session.scalars(select(Host).where(Host.id.in_(body.host_ids)))}
    for i, host_id in enumerate(body.host_ids):
        host = hosts.get(host_id)
        if host is None or host.revoked_at is not None or host.deleted_at is not None:
            raise Unprocessable(f"host_ids[{i}]: host {host_id} is not a registered host")
    check_hosts_fit(body, [hosts[h] for h in body.host_ids])
    params = body.params.model_dump(mode="json")
    refuse_unused(body.experiment, params, body.params.model_fields_set)
    admit(session, body, created_by)  # holds ADMISSION_LOCK until the commit below
    job = Job(experiment=body.experiment, params=params, created_by=created_by, suite_run_id=suite_run_id)
    session.add(job)
    session.flush()
    if EXPERIMENTS[body.experiment].hosts > 1:
        pairing.add_pair(session, job, EXPERIMENTS[body.experiment], body.host_ids, params, expected_s)
        if commit:
            session.commit()
        return job
    # one run per host and item of a fan_out list (op: ["fp64", "fp32"]), each with one value and its own duration,
    # and only the params that apply to it (a STREAM run of op [copy, stream_triad] keeps no blocks)
    kind = EXPERIMENTS[body.experiment]
    each = [(kind.run.applying(one), expected_duration(body.experiment, one)) for one in kind.split(params)]
    for host_id in body.host_ids:
        for one, one_s in each:
            session.add(Run(job_id=job.id, host_id=host_id, experiment=body.experiment, params=one,
                            expected_duration_s=one_s))
    if commit:
        session.commit()  # PostgreSQL first; only then ring the doorbell
    else:
        session.flush()  # the next job's admission counts these runs
    return job


def job_public(session: Session, job: Job) -> JobPublic:
    runs = list(session.scalars(select(Run).where(Run.job_id == job.id).order_by(Run.id)))
    return JobPublic(id=job.id, created_at=job.created_at, experiment=job.experiment, created_by=job.created_by,
                     runs=[run_public(session, r) for r in runs])


def get_run(session: Session, run_id: int, *, for_update: bool = False) -> Run:
    q = select(Run).where(Run.id == run_id)
    if for_update:
        q = q.with_for_update()
    run = session.scalar(q)
    if run is None:
        raise NotFound(f"run {run_id} not found")
    return run


# A list's count is exact up to this many runs; beyond it the answer says "more than" (RunsPublic.count_more):
# counting a million matching rows on every page read costs more than the page.
COUNT_BOUND = 10_000
# What a list read leaves unread: the raw results and the stored result (their headline and verdict are columns).
_HEAVY = (Run.raw_results, Run.result, Run.references)


@dataclass
class Part:
    """Runs matching History's filters, of one part: conditions on runs, and the order a page reads them in."""

    where: list[ColumnElement[bool]]
    order: list[ColumnElement[Any]]


def runs_where(f: RunFilter) -> list[Part]:
    """History's filters, each served by an index, as the parts the matching runs fall in: one part; with label
    filters two that never share a run, those handed out under the labels (their snapshot, the first label's index
    ix_runs_label_<key>, migration 0027) and those not handed out yet whose host has the labels now
    (ix_runs_unlabelled).

    The runs handed out under a label are read newest first along the label's index, ordered by (label, id) and
    with the label matched as a range of one value, `>= v AND <= v`, not `= v`: the same runs in the same order,
    but only that index gives the order. With `= v` PostgreSQL knew the order to be the primary key's too and, for a
    label on a tenth of the runs, read the primary key backwards filtering on the label: 500 runs for a page, well
    while the label's runs are spread over time, but every run back to the last of a label not used lately."""
    common: list[ColumnElement[bool]] = []
    if f.ids is not None:
        common.append(Run.id.in_(f.ids))
    if f.job_id is not None:
        common.append(Run.job_id == f.job_id)
    if f.host_id is not None:
        common.append(Run.host_id == f.host_id)
    if f.experiment is not None:
        common.append(Run.experiment == f.experiment)
    if f.status is not None:
        common.append(Run.status == f.status)
    if f.created_after is not None:
        common.append(Run.created_at >= f.created_after)
    if f.created_before is not None:
        common.append(Run.created_at < f.created_before)
    labels = [(key, value) for key in LABEL_KEYS if (value := getattr(f, key)) is not None]
    if not labels:
        return [Part(common, [Run.id.desc()])]
    (key, value), others = labels[0], labels[1:]
    label = snapshot_label(key)
    hosts = select(Host.id).where(*(Host.labels[k].as_string() == v for k, v in labels))
    return [Part([*common, label >= value, label <= value, *(snapshot_label(k) == v for k, v in others)],
                 [label.desc(), Run.id.desc()]),
            Part([*common, Run.labels_snapshot.is_(None), Run.host_id == any_(func.array(hosts.scalar_subquery()))],
                 [Run.id.desc()])]


def page_query(f: RunFilter, limit: int, offset: int = 0, before_id: int | None = None
               ) -> Select[Run, Host, str | None]:
    """The newest `limit` runs matching, with their host and who asked: below `before_id` (keyset), else after
    `offset` of them. With label filters, each part's newest come from a backward range of its own index and the
    newest of both are kept: the label's runs are never all read to pick a page (an OR of the two parts was one
    bitmap of every run under the label, 100,000 at a million runs, read and sorted for each page)."""
    parts = runs_where(f)
    if before_id is not None:
        parts = [Part([*p.where, Run.id < before_id], p.order) for p in parts]
        offset = 0
    q = select(Run, Host, Job.created_by).join(Host, Host.id == Run.host_id).join(Job, Job.id == Run.job_id)
    if len(parts) == 1:
        q = q.where(*parts[0].where)
    else:
        newest = union_all(*(select(Run.id).where(*p.where).order_by(*p.order).limit(offset + limit)
                             for p in parts)).subquery()
        q = q.where(Run.id.in_(select(newest.c.id)))
    q = q.order_by(Run.id.desc()).limit(limit)
    return q.offset(offset) if offset else q


def count_query(f: RunFilter, bound: int) -> Select[int]:
    """How many runs match, counted up to `bound` (each part to `bound`: they share no run)."""
    parts = [select(Run.id).where(*p.where).limit(bound) for p in runs_where(f)]
    counted = parts[0] if len(parts) == 1 else union_all(*parts)
    return select(func.count()).select_from(counted.subquery())


def list_runs(session: Session, f: RunFilter, limit: int, offset: int = 0, *, before_id: int | None = None,
              full: bool = False) -> RunsPublic:
    """The newest runs matching, `limit` of them: below `before_id` (keyset: a page stays the same while runs are
    added), or from `offset` (deprecated: OFFSET reads every row it skips). full=False leaves the results' rows out."""
    matched = session.scalar(count_query(f, COUNT_BOUND + 1)) or 0
    q = page_query(f, limit + 1, offset, before_id)
    if not full:
        q = q.options(*(defer(c) for c in _HEAVY))
    rows = session.execute(q).all()
    more = len(rows) > limit
    rows = rows[:limit]
    data = [run_to_public(r, h.name, by, h, full=full) for r, h, by in rows]
    return RunsPublic(data=data, count=min(matched, COUNT_BOUND), count_more=matched > COUNT_BOUND,
                      next_before_id=rows[-1][0].id if more and rows else None)


def all_samples(session: Session, run: Run) -> list[SamplePublic]:
    out: list[SamplePublic] = []
    while True:
        batch = samples_after(session, run, out[-1].seq if out else -1, SAMPLES_PAGE_MAX)
        out.extend(batch)
        if len(batch) < SAMPLES_PAGE_MAX:
            return out


def samples_after(session: Session, run: Run, after_seq: int, limit: int) -> list[SamplePublic]:
    return samples.after(session, run, after_seq, limit)


def finish_run(session: Session, run: Run, status: str, reason: str | None) -> None:
    """Move a run to a terminal state (caller holds the row lock) and tell every watcher. A move the run status does
    not allow (hostbench_common.runstatus.TRANSITIONS: a finished run ends again) is refused: 409."""
    if not may_move(run.status, status):
        session.rollback()
        raise Conflict(f"run {run.id} is {run.status}: it cannot become {status}")
    run.status = status
    run.status_reason = reason
    run.finished_at = utcnow()
    run.lease_expires_at = None
    samples.store_summary(session, run)  # its measured samples' count, min, max, sum: what reports read
    session.commit()
    publish_run(session, run)
    # a two-host job's runs end together (several partners: a serve run's drivers, many to one)
    for other, other_status, other_reason in pairing.partner_end(session, run):
        if other.status in TERMINAL:  # ended meanwhile, by another partner's end
            continue
        finish_run(session, other, other_status, other_reason)
        ring(other.host_id)
    # serve runs elsewhere that wait for this host to be free for their drivers (app.jobs.pairing.wait), and the
    # hosts of a mesh's next round once this run's round has ended (app.jobs.rounds)
    # and the hosts of a suite run whose turn comes after this run's host, on the same machine (app.jobs.turns)
    waiting = (pairing.serve_hosts_waiting_on(session, run.host_id) + rounds.hosts_to_ring(session, run)
               + turns.hosts_to_ring(session, run))
    session.rollback()
    for host_id in sorted(set(waiting)):
        ring(host_id)


def cancel_run(session: Session, run_id: int, by: str | None = None) -> Run:
    run = get_run(session, run_id, for_update=True)
    if run.status in TERMINAL:
        session.rollback()
        return run
    run.cancel_requested = True
    run.cancelled_by = by
    finish_run(session, run, RunStatus.cancelled, f"cancelled by {by}" if by else "cancelled by the user")
    return run


def deadline_s(run: Run) -> float:
    if ROLE_OF.get(run.experiment) == "serve":  # serves for as long as its driver may take, and then some
        driver = run.expected_duration_s * 1.1 + get_settings().deadline_slack_s
        return max(run.expected_duration_s + SERVE_SLACK_S, driver + 60.0)
    return run.expected_duration_s * 1.1 + get_settings().deadline_slack_s
