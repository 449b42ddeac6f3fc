"""Sample ingest at the database's pace: one batch is one INSERT ... SELECT FROM unnest(arrays) ON CONFLICT DO
NOTHING (ten array parameters, whatever the batch size: nothing is compiled per sample), one commit, then one
publish to the live streams. Validation is the request model's (pydantic-core, in one pass over the batch).

Idempotent: a resent batch inserts nothing twice. A seq already stored with *different* fields is a conflict:
the stored sample stays, the seq is listed in the acknowledgement's `conflicts`, and the server logs it; it is
never silently dropped or overwritten. Samples of the current attempt are kept even after the run ended (a
runner that was cut off uploads its backlog when it comes back)."""
import logging
import time

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.core import broker
from app.hosts.models import Host
from app.jobs.schemas import SAMPLE_FIELDS
from app.runner_api.schemas import SampleIn
from app.runner_api.service import _owned_run, _renew, note_seen

log = logging.getLogger("hostbench.ingest")
FIELDS = SAMPLE_FIELDS  # the insert below and _row() take them in this order
assert FIELDS == tuple(SampleIn.model_fields), "a sample's fields differ between what runners send and what is kept"

_INSERT = text("""
insert into samples (run_id, attempt, seq, t, interval_s, threads, "repeat", warmup, value, unit, op, block_bytes,
                     received_at)
select :run_id, :attempt, u.seq, u.t, u.interval_s, u.threads, u.rep, u.warmup, u.value, u.unit, u.op, u.block_bytes,
       now()
from unnest(cast(:seq as bigint[]), cast(:t as float8[]), cast(:interval_s as float8[]), cast(:threads as int[]),
            cast(:rep as int[]), cast(:warmup as boolean[]), cast(:value as float8[]), cast(:unit as varchar[]),
            cast(:op as varchar[]), cast(:block_bytes as bigint[]))
     as u(seq, t, interval_s, threads, rep, warmup, value, unit, op, block_bytes)
on conflict (run_id, attempt, seq) do nothing
returning seq
""")

_STORED = text("""
select seq, t, interval_s, threads, "repeat", warmup, value, unit, op, block_bytes from samples
where run_id = :run_id and attempt = :attempt and seq = any(cast(:seqs as bigint[]))
""")


def _row(s: SampleIn) -> tuple:
    return (s.seq, float(s.t), float(s.interval_s), s.threads, s.repeat, s.warmup, float(s.value), s.unit, s.op,
            s.block_bytes)


def ingest(session: Session, host: Host, run_id: int, attempt: int,
           samples: list[SampleIn]) -> tuple[int, int, list[int]]:
    """Store a batch; returns (inserted, max_seq, conflicting seqs)."""
    run = _owned_run(session, host, run_id, attempt)  # locks the run row: batches of one run go one at a time
    rows: dict[int, tuple] = {}
    conflicts: set[int] = set()
    for s in samples:
        r = _row(s)
        seen = rows.get(s.seq)
        if seen is None:
            rows[s.seq] = r
        elif seen != r:
            conflicts.add(s.seq)  # the same seq twice in one batch, with different fields: the first one counts
    cols = list(zip(*rows.values(), strict=True))
    inserted = set(session.scalars(_INSERT, {
        "run_id": run_id, "attempt": attempt, "seq": list(cols[0]), "t": list(cols[1]), "interval_s": list(cols[2]),
        "threads": list(cols[3]), "rep": list(cols[4]), "warmup": list(cols[5]), "value": list(cols[6]),
        "unit": list(cols[7]), "op": list(cols[8]), "block_bytes": list(cols[9]),
    }).all())
    resent = [seq for seq in rows if seq not in inserted]
    if resent:  # a resend: the stored fields must be the same ones
        for stored in session.execute(_STORED, {"run_id": run_id, "attempt": attempt, "seqs": resent}):
            if tuple(stored) != rows[stored[0]]:
                conflicts.add(stored[0])
    max_seq = max(rows)
    run.last_seq = max(run.last_seq, max_seq)
    if run.status in ("dispatched", "running"):
        _renew(run)
    note_seen(host)
    session.commit()  # acknowledge only after the commit
    if conflicts:
        log.warning("run %s attempt %s: %d sample(s) resent with different fields refused (the stored ones stay): "
                    "seq %s", run_id, attempt, len(conflicts), sorted(conflicts)[:20])
    if inserted:
        fresh = [dict(zip(FIELDS, rows[seq], strict=True)) for seq in rows if seq in inserted]
        broker.publish(broker.run_channel(run_id), {"type": "samples", "samples": fresh, "published": time.time()})
    return len(inserted), max_seq, sorted(conflicts)
