"""A run's result is computed once and stored (issue 31): at finish (app.runner_api.service.finish), and again
only when what it was computed from changes, in the background. No read computes a result: reads serve the stored
one, with `result_updating` while a recompute is due.

A result depends, beside the run's own raw results, on the host's peaks (a peak entered by hand: Host.peaks_version)
and on this code (RESULT_CODE); each stored result records both (Run.result_basis). A change of a host's peaks
raises its version and rings the recompute task (app.hosts.service.set_peak_override,
app.worker.tasks.recompute_results). A read compares the run's basis with its host's version, so the note is there
from that commit on. The task (recompute_stale) first marks the host's runs stale (Run.result_stale, indexed) and
records the version it marked (Host.peaks_marked), then takes stale runs a batch at a time under row locks (SKIP
LOCKED: two workers share the work), recomputes each from its raw results and commits the batch: idempotent (a
recomputed run is no longer stale) and resumable (what is left stays marked; beat's periodic sweep rings the task
again after a lost message or a restart, and finds hosts whose version moved past what was marked). Results stored
before this scheme have no basis and are swept the same way.

A change of RESULT_CODE (a new way of computing) needs `UPDATE runs SET result_stale = true WHERE result IS NOT
NULL` in the migration that ships it: the sweep finds stale results through an index, never by reading every run."""
import logging
import time
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from app.hosts.models import Host
from app.jobs.models import Run
from app.results.schemas import RunResult
from app.results.service import compute_result, with_units, with_verdict

log = logging.getLogger("hostbench.results")

RESULT_CODE = 1  # raise with a migration that marks every result stale (above)
RECOMPUTE_BATCH = 50  # runs per transaction: a crash loses at most one batch's work, redone on the next pass
RECOMPUTE_BUDGET_S = 40.0  # below the task's soft time limit; what is left is rung again (app.worker.tasks)


def basis(host: Host | None) -> dict[str, Any]:
    """The inputs a result is computed from, as they stand now; bands (issue 29) add their version here."""
    return {"code": RESULT_CODE, "peaks": host.peaks_version if host is not None else 0}


def store(run: Run, result: RunResult, host: Host | None) -> None:
    """Keep `result` as the run's stored result, with the version of the inputs it used and its list figures."""
    run.result = result.model_dump(mode="json")
    run.result_basis = basis(host)
    run.result_stale = False
    run.headline = result.headline.model_dump(mode="json") if result.headline is not None else None
    run.verdict = result.verdict


def updating(run: Run, host: Host | None) -> bool:
    """Is a recompute of this run's stored result due (its host's peaks changed, or it predates stored results)?
    Read from the small columns only: a list leaves the result itself unread (it is deferred), and touching it here
    would load it, one query per run."""
    b = run.result_basis
    if b is None:
        return run.verdict is not None  # stored before results were: its verdict was copied out (migration 0020)
    moved = host is not None and b.get("peaks") != host.peaks_version
    return run.result_stale or b.get("code") != RESULT_CODE or moved


def stored_result(run: Any) -> RunResult | None:
    """The stored result, as stored: nothing is recomputed. Rows stored before units were part of a row get the
    kernel's units as declared now (a look-up, not a computation)."""
    if not run.result:
        return None
    stored = RunResult.model_validate(run.result)
    for row in stored.rows:
        if not row.extra_units:
            with_units(row, run.experiment)
    return stored


def recomputed(run: Run, host: Host | None) -> RunResult | None:
    """The run's result from its raw results against the host's peaks as they stand; the trace summary and the
    pair check are the ones stored at the end of the run (they need the samples, and the peer as it was). A result
    that cannot be recomputed (raw results from an older protocol, or none) is kept, its verdict derived again."""
    stored = stored_result(run)
    if stored is None:
        return None
    if not run.raw_results:
        return with_verdict(stored)
    try:
        fresh = compute_result(run.experiment, run.params, run.raw_results, run.kernel_info,
                               run.inventory_snapshot or (host.inventory if host is not None else None) or {},
                               run.references, host.peak_overrides if host is not None else None, stored.pair)
    except (KeyError, TypeError, ValueError):
        return with_verdict(stored)
    fresh.trace = stored.trace
    return with_verdict(fresh)


def mark_stale(session: Session, host_id: int | None) -> None:
    """Mark the results of the hosts whose peaks moved past what was last marked (one host, or every such host)
    stale, and record the version marked. Committed by the caller."""
    q = select(Host).where(Host.peaks_version != Host.peaks_marked).with_for_update()
    if host_id is not None:
        q = q.where(Host.id == host_id)
    for host in session.scalars(q):
        session.execute(update(Run).where(Run.host_id == host.id, Run.result.is_not(None))
                        .values(result_stale=True))
        host.peaks_marked = host.peaks_version


def _stale(host_id: int | None) -> Any:
    q = select(Run.id).where(Run.result.is_not(None), or_(Run.result_stale, Run.result_basis.is_(None)))
    if host_id is not None:
        q = q.where(Run.host_id == host_id)
    return q


def recompute_stale(session: Session, host_id: int | None = None,
                    budget_s: float = RECOMPUTE_BUDGET_S) -> tuple[int, bool]:
    """Recompute stale results, a batch per transaction, until none is left or `budget_s` is spent: (how many
    were recomputed, whether any is left). The host's row is read FOR SHARE, so a peak change waits for the batch
    that read the old peaks to commit, and then marks those runs stale again."""
    done = 0
    t0 = time.monotonic()
    mark_stale(session, host_id)
    session.commit()
    while time.monotonic() - t0 < budget_s:
        ids = list(session.scalars(_stale(host_id).order_by(Run.id).limit(RECOMPUTE_BATCH)
                                   .with_for_update(skip_locked=True)))
        if not ids:
            session.rollback()
            return done, False
        runs = list(session.scalars(select(Run).where(Run.id.in_(ids)).order_by(Run.id)))
        host_ids = sorted({r.host_id for r in runs})
        hosts = {h.id: h for h in session.scalars(select(Host).where(Host.id.in_(host_ids)).order_by(Host.id)
                                                  .with_for_update(read=True))}
        for run in runs:
            host = hosts.get(run.host_id)
            result = recomputed(run, host)
            if result is not None:
                store(run, result, host)
        session.commit()
        done += len(runs)
    left = session.scalar(_stale(host_id).limit(1)) is not None
    session.rollback()
    log.info("recomputed %d stored results in %.1f s%s", done, time.monotonic() - t0, "; more left" if left else "")
    return done, left
