"""Expected bands (docs/methodology/verdicts.md, "Expected bands").

A kind of host is `cpu=<model>/<cores>` (from its inventory) or one of its labels `key=value`. A declared band is a
person's (versioned rows of `bands`: the newest version is the band, a removal is a version too). A learned band is
computed when a figure is judged: the median and robust spread of the newest valid figure of each *other* host of
the same kind (at least LEARNED_MIN_SIBLINGS of them), bounded on the figure's worse side only. Declared beats
learned. `judge` is the one place a figure is set against a band; health checks (app.checks) and anything else
that judges a figure (the all-pairs matrix's cells) call it."""
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session, load_only

from app.bands.models import Band
from app.bands.schemas import BandIn, BandPublic, BandRemove, BandUsed, FigureKey, ImportOutcome, Judgement, Sibling
from app.core.db import utcnow
from app.core.errors import FieldInvalid, NotFound
from app.experiments.registry import RUNS
from app.hosts.models import Host
from app.jobs.models import Run, RunStatus
from app.results.verdict import usable
from app.trends import detector
from app.trends.service import direction, verdict_of

CPU = "cpu"
# A learned band needs the newest valid figure of at least this many other hosts of the kind.
LEARNED_MIN_SIBLINGS = 3
# Its bound on the worse side: the median minus (plus, when lower is better) the larger of K robust standard
# deviations (1.4826 x MAD) and MIN_REL of the median: with few siblings the MAD can be near zero by chance, and
# a host 5 % below three others that happen to agree is not failing.
LEARNED_K = 3.0
LEARNED_MIN_REL = 0.20
# Round trips (a ping-pong's rate) measure how fast a blocked thread is woken, which other work on the same CPUs
# moves far more than it moves a throughput: on a 2-vCPU guest one phase's per-second loopback TCP round trips
# read 21.1k then 16.5k RT/s, and eight hosts of one machine 14.2k-21.6k RT/s, measured in turn
# (docs/methodology/verdicts.md, "The 8-host table"). At 20 % a quiet sibling set failed a host inside that scatter.
LEARNED_MIN_REL_OP = {"tcp_rr": 0.40, "udp_rr": 0.40}
# A loopback throughput is two threads of one host handing data to each other through its kernel. The validity gate
# lets each of them lose up to a tenth of its time to other work and still be valid (run-queue wait and CPU share,
# docs/methodology/verdicts.md), which alone may cost 0.9 x 0.9 = 81 % of the figure, and quiet hosts of one kind
# scatter about 12 % either side of their median beside that (8-host table, 2026-11-29: 43.5-55.5 Gbit/s of 64 KiB
# loopback TCP, median 49.6): 0.81 x 0.88 = 0.71, so the floor is 30 %. At 20 % a valid 38.7 Gbit/s (CPU share
# 0.90, both repeats alike) failed an undisturbed host against five siblings at 49.6-54.9 (check 15 of that table).
LEARNED_MIN_REL_LOOPBACK = 0.30
LOOKBACK = 20  # a sibling's newest runs of the kind looked at for a valid figure


def robust_spread(values: list[float], centre: float) -> float:
    """The siblings' scatter as a standard deviation: the larger of 1.4826 x MAD and IQR / 1.349. The two agree on a
    normal scatter; where a kind's figures fall in two groups (a cloud disk read at its burst rate by some hosts
    and at its baseline by the others: 1 MiB random reads at 1.16-1.22 GB/s on two hosts and 1.76-1.79 on four, in
    one check of the 8-host table) the MAD is the larger group's alone and failed the others, while the IQR spans
    both groups."""
    mad = detector.median([abs(v - centre) for v in values]) * 1.4826
    iqr = (detector.quantile(values, 0.75) - detector.quantile(values, 0.25)) / 1.349
    return max(mad, iqr)


def _loopback(experiment: str) -> bool:
    run = RUNS.get(experiment)
    return run is not None and run.peak == "loopback"


def learned_min_rel(op: str | None, experiment: str = "") -> float:
    if op in LEARNED_MIN_REL_OP:
        return LEARNED_MIN_REL_OP[op or ""]
    return LEARNED_MIN_REL_LOOPBACK if _loopback(experiment) else LEARNED_MIN_REL


def learned_method(op: str | None, experiment: str = "") -> str:
    why = (" (a round trip: how fast a thread is woken)" if op in LEARNED_MIN_REL_OP
           else " (loopback: two threads of one host, each allowed a tenth of its time lost)" if _loopback(experiment)
           else "")
    return (f"median of the newest valid figure of each other host of the kind (at least {LEARNED_MIN_SIBLINGS}); "
            f"bound on the worse side at the larger of {LEARNED_K:g} robust spreads (1.4826 x MAD or IQR / 1.349, the "
            f"larger) and {learned_min_rel(op, experiment):.0%} of the median{why}")


def cpu_kind(inventory: dict[str, Any] | None) -> str | None:
    cpu = (inventory or {}).get("cpu") or {}
    model, cores = cpu.get("model"), cpu.get("cores")
    if not isinstance(model, str) or not model.strip() or not isinstance(cores, int) or cores < 1:
        return None
    return f"{CPU}={' '.join(model.split())[:180]}/{cores}"


def kinds_of(host: Host, first: str | None = None) -> list[str]:
    """The kinds a host is (its CPU kind, then its labels by key), the one named by `first` (a key) first."""
    out = [k for k in [cpu_kind(host.inventory)] if k]
    out += [f"{k}={v}" for k, v in sorted((host.labels or {}).items()) if v not in (None, "") and k != CPU]
    if first:
        out.sort(key=lambda k: k.split("=", 1)[0] != first)
    return out


def check_key(key: FigureKey, where: str = "body") -> None:
    if key.experiment not in RUNS:
        raise FieldInvalid((where, "experiment"), f"no run kind {key.experiment!r}; one of {sorted(RUNS)}", "enum")


def _key_where(key: FigureKey) -> list[ColumnElement[bool]]:
    return [Band.experiment == key.experiment, Band.op.is_(None) if key.op is None else Band.op == key.op,
            Band.threads == key.threads,
            Band.block_bytes.is_(None) if key.block_bytes is None else Band.block_bytes == key.block_bytes]


def as_in(b: Band) -> BandIn:
    return BandIn(kind=b.kind, experiment=b.experiment, op=b.op, threads=b.threads, block_bytes=b.block_bytes,
                  target=b.target, lower=b.lower, upper=b.upper, of_peak=b.of_peak, unit=b.unit, note=b.note)


def public(b: Band) -> BandPublic:
    return BandPublic(**as_in(b).model_dump(), id=b.id, version=b.version, removed=b.removed, set_by=b.set_by,
                      set_at=b.set_at)


def _newest_ids() -> Any:
    """The newest version of every (kind, figure)."""
    ranked = select(Band.id, func.row_number().over(
        partition_by=(Band.kind, Band.experiment, func.coalesce(Band.op, ""), Band.threads,
                      func.coalesce(Band.block_bytes, -1)), order_by=Band.version.desc()).label("k")).subquery()
    return select(ranked.c.id).where(ranked.c.k == 1)


def current(session: Session, kind: str | None = None, experiment: str | None = None) -> list[Band]:
    """Every declared band as it stands (its newest version, unless that removed it)."""
    q = select(Band).where(Band.id.in_(_newest_ids()), Band.removed.is_(False))
    if kind is not None:
        q = q.where(Band.kind == kind)
    if experiment is not None:
        q = q.where(Band.experiment == experiment)
    return list(session.scalars(q.order_by(Band.kind, Band.experiment, Band.op, Band.threads, Band.block_bytes)))


def versions(session: Session, kind: str, key: FigureKey) -> list[Band]:
    return list(session.scalars(select(Band).where(Band.kind == kind, *_key_where(key))
                                .order_by(Band.version.desc())))


def _add_version(session: Session, body: BandIn, removed: bool, by: str | None) -> Band:
    newest = versions(session, body.kind, body)
    row = Band(**body.model_dump(), version=(newest[0].version + 1) if newest else 1, removed=removed, set_by=by,
               set_at=utcnow())
    session.add(row)
    session.flush()
    return row


def set_band(session: Session, body: BandIn, by: str | None) -> tuple[Band, bool]:
    """A new version, unless the band stands as given already; (the band, whether it changed)."""
    check_key(body)
    newest = versions(session, body.kind, body)
    if newest and not newest[0].removed and as_in(newest[0]) == body:
        return newest[0], False
    return _add_version(session, body, False, by), True


def remove_band(session: Session, body: BandRemove, by: str | None) -> Band:
    newest = versions(session, body.kind, body)
    if not newest or newest[0].removed:
        raise NotFound(f"no band for {body.kind} {body.experiment} {body.op or ''} {body.threads} threads")
    gone = as_in(newest[0])
    return _add_version(session, gone, True, by)


def import_bands(session: Session, bands: Sequence[BandIn], replace: bool, by: str | None) -> ImportOutcome:
    """Set every band of a file (a version only where it differs); with `replace`, remove the bands it lacks."""
    seen: set[tuple[Any, ...]] = set()
    added = changed = unchanged = removed = 0
    for b in bands:
        ident = (b.kind, b.experiment, b.op, b.threads, b.block_bytes)
        if ident in seen:
            raise FieldInvalid(("body", "bands"), f"the band {ident} is in the file twice", "value_error")
        seen.add(ident)
        had = versions(session, b.kind, b)
        _, did = set_band(session, b, by)
        if not did:
            unchanged += 1
        elif had and not had[0].removed:
            changed += 1
        else:
            added += 1
    if replace:
        for row in current(session):
            if (row.kind, row.experiment, row.op, row.threads, row.block_bytes) not in seen:
                _add_version(session, as_in(row), True, by)
                removed += 1
    return ImportOutcome(added=added, changed=changed, unchanged=unchanged, removed=removed)


# -- learned --------------------------------------------------------------------------------------------------------

def _of_kind(session: Session, kind: str) -> list[Host]:
    key, _, value = kind.partition("=")
    hosts = session.scalars(select(Host).where(Host.deleted_at.is_(None), Host.revoked_at.is_(None))).all()
    if key == CPU:
        return [h for h in hosts if cpu_kind(h.inventory) == kind]
    return [h for h in hosts if str((h.labels or {}).get(key, "")) == value and value]


def _match(row: dict[str, Any], key: FigureKey) -> bool:
    return (row.get("op") == key.op and row.get("threads") == key.threads
            and row.get("block_bytes") == key.block_bytes)


def _finite(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) else None


@dataclass
class Baselines:
    """What judging many figures reads once: the newest runs of each kind of each sibling set, and the declared
    bands. One per check (or per call of `judge`)."""

    session: Session
    _runs: dict[tuple[str, tuple[int, ...]], list[Run]] = field(default_factory=dict)
    _kinds: dict[str, list[Host]] = field(default_factory=dict)

    def of_kind(self, kind: str) -> list[Host]:
        """Every live host of a kind (the judged one too: `learned` leaves it out), read once per kind."""
        if kind not in self._kinds:
            self._kinds[kind] = _of_kind(self.session, kind)
        return self._kinds[kind]

    def runs(self, experiment: str, host_ids: Iterable[int]) -> list[Run]:
        ids = tuple(sorted(host_ids))
        if (experiment, ids) not in self._runs:
            ranked = (select(Run.id, func.row_number().over(
                partition_by=Run.host_id, order_by=(Run.finished_at.desc(), Run.id.desc())).label("k"))
                .where(Run.experiment == experiment, Run.status == RunStatus.succeeded, Run.result.is_not(None),
                       Run.finished_at.is_not(None), Run.host_id.in_(ids)).subquery())
            self._runs[(experiment, ids)] = list(self.session.scalars(
                select(Run).join(ranked, ranked.c.id == Run.id).where(ranked.c.k <= LOOKBACK)
                .options(load_only(Run.id, Run.host_id, Run.finished_at, Run.result, Run.status, Run.experiment))
                .order_by(Run.finished_at.desc(), Run.id.desc())))
        return self._runs[(experiment, ids)]


def peer_of(run: Run) -> int | None:
    """The host a driving run drove to (its result's `pair`, from the server's own records), else None."""
    pair = (run.result or {}).get("pair")
    peer = pair.get("peer_host_id") if isinstance(pair, dict) else None
    return peer if isinstance(peer, int) and not isinstance(peer, bool) else None


def learned(b: Baselines, host: Host, key: FigureKey, kind: str, unit: str,
            at: datetime | None = None, peer: int | None = None) -> tuple[BandUsed | None, str]:
    """The learned band of a figure for a host of `kind` (None and why when there is none). A two-host figure is
    the pair's: with `peer` (the host the judged run drove to), only the siblings' runs to that same peer count, so
    that a slow link at the far end of a sibling's figure is never taken for what hosts of the kind deliver."""
    kin = b.of_kind(kind)
    sibs = [h for h in kin if h.id != host.id]
    names = {h.id: h.name for h in sibs}
    found: dict[int, Sibling] = {}
    for run in b.runs(key.experiment, [h.id for h in kin]):
        if (run.host_id not in names or run.host_id in found or run.finished_at is None
                or (at is not None and run.finished_at > at) or (peer is not None and peer_of(run) != peer)):
            continue
        for row in (run.result or {}).get("rows") or []:
            mean = _finite(row.get("mean"))
            if _match(row, key) and mean is not None and usable(verdict_of(run, row)):
                found[run.host_id] = Sibling(host_id=run.host_id, host_name=names[run.host_id], run_id=run.id,
                                             value=mean, at=run.finished_at)
                break
    to = f" to the same peer (host {peer})" if peer is not None else ""
    if len(found) < LEARNED_MIN_SIBLINGS:
        return None, (f"no declared band, and {len(found)} of the {len(sibs)} other hosts of {kind} have a valid "
                      f"figure{to}; a learned band needs {LEARNED_MIN_SIBLINGS}")
    values = [s.value for s in found.values()]
    centre = detector.median(values)
    spread = robust_spread(values, centre)
    tol = max(LEARNED_K * spread, learned_min_rel(key.op, key.experiment) * abs(centre))
    _, lower_is_better = direction(key.experiment)
    band = BandUsed(source="learned", kind=kind, lower=None if lower_is_better else centre - tol,
                    upper=centre + tol if lower_is_better else None, target=centre, unit=unit, centre=centre,
                    spread=spread, siblings=sorted(found.values(), key=lambda s: s.host_name),
                    computed_at=utcnow(), method=learned_method(key.op, key.experiment))
    return band, f"learned from {len(found)} other hosts of {kind}{to}"


def _declared(session: Session, kinds: list[str], key: FigureKey) -> list[Band]:
    rows = {r.kind: r for r in session.scalars(select(Band).where(Band.id.in_(_newest_ids()),
                                                                   Band.kind.in_(kinds), *_key_where(key)))}
    return [rows[k] for k in kinds if k in rows and not rows[k].removed]


def _declared_used(band: Band, peak: float | None) -> tuple[BandUsed | None, str]:
    scale = 1.0
    if band.of_peak:
        if peak is None or peak <= 0:
            return None, f"the declared band of {band.kind} (v{band.version}) is a fraction of the peak, and this " \
                         "figure has no peak"
        scale = peak
    def s(v: float | None) -> float | None:
        return None if v is None else v * scale
    return BandUsed(source="declared", kind=band.kind, lower=s(band.lower), upper=s(band.upper), target=s(band.target),
                    unit=band.unit, band_id=band.id, version=band.version, of_peak=band.of_peak, note=band.note,
                    set_by=band.set_by, set_at=band.set_at), "declared"


def inside(band: BandUsed, value: float) -> bool:
    return _setting(band, value)[0] == "pass"


def _setting(band: BandUsed, value: float) -> tuple[str, float]:
    if band.lower is not None and value < band.lower:
        return "fail", (value - band.lower) / abs(band.lower) if band.lower else -math.inf
    if band.upper is not None and value > band.upper:
        return "fail", (value - band.upper) / abs(band.upper) if band.upper else math.inf
    return "pass", 0.0


def judge(session: Session, host: Host, key: FigureKey, value: float, *, unit: str = "", peak: float | None = None,
          kind_by: str | None = CPU, baselines: Baselines | None = None, at: datetime | None = None,
          peer: int | None = None) -> Judgement:
    """Set one valid figure of `host` against its band: the declared band of the first of the host's kinds that has
    one (the kind named by `kind_by` first), else the learned band of that kind, else no baseline.
    Only valid figures may be judged: a disturbed one says nothing about the host (the caller says DISTURBED)."""
    b = baselines or Baselines(session)
    kinds = kinds_of(host, kind_by)
    why = []
    for band in _declared(session, kinds, key):
        used, note = _declared_used(band, peak)
        if used is not None:
            status, distance = _setting(used, value)
            return Judgement(status=status, value=value, unit=unit or used.unit, band=used,  # type: ignore[arg-type]
                             distance=distance, reason=f"declared band of {band.kind}, version {band.version}")
        why.append(note)
    learn_kind = next((k for k in kinds if k.split("=", 1)[0] == kind_by), None) if kind_by else None
    if learn_kind is None:
        why.append(f"no declared band, and the host has no kind {kind_by!r} to learn one from")
        return Judgement(status="no_baseline", value=value, unit=unit, band=None, distance=None, reason="; ".join(why))
    used, note = learned(b, host, key, learn_kind, unit, at, peer)
    if used is None:
        why.append(note)
        return Judgement(status="no_baseline", value=value, unit=unit, band=None, distance=None, reason="; ".join(why))
    status, distance = _setting(used, value)
    return Judgement(status=status, value=value, unit=unit, band=used, distance=distance,  # type: ignore[arg-type]
                     reason=note)
