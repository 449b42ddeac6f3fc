"""The runners' frequent calls on the event loop: the heartbeat, the long poll's steps, the lease renewal and the
sample upload, each as one SQL statement on a pooled asynchronous connection in autocommit (a single statement is
its own transaction): no worker thread, no ORM object, no separate BEGIN and COMMIT (issue 11; docs/architecture.md,
"Concurrency").

Why: a thousand runners with two hundred running send about 400 of these calls a second. Through the synchronous
path each one took up to four hops between the event loop and a worker thread (the session dependency in and out,
the credential, the handler) and six to eight round trips to PostgreSQL (the pool's ping, BEGIN, the host, the run
locked, the write, the run's update, COMMIT), every one a release and a re-take of the interpreter's lock by one of
some thirty threads. `./hostbench load` measured 20,000 voluntary context switches a second in the control process
and 4.5 ms of CPU per call; that process, not PostgreSQL, was the ceiling (docs/scaling.md).

Each statement does the common case whole: the credential (the host's current token), the run's owner and attempt,
the write, and the host's last-seen mark (at most every SEEN_EVERY_S, and when its address changed). When it
matches nothing, `explain` asks the full path (app.hosts.service, app.runner_api.service, in a worker thread),
which says why with the right status (401, 404, 409), or, on the first call with a rotated credential, completes
the rotation; then the statement is tried once more. So the rules stay where they are defined, and this module only
has the fast way through them."""
import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from starlette.concurrency import run_in_threadpool

from app.core import broker
from app.core.config import get_settings
from app.core.db import POOL_TIMEOUT_S, PoolBusy, runner_session, utcnow
from app.core.dbwatch import DB_WATCH, _libpq_url
from app.core.errors import Conflict, Unauthorized, Unavailable
from app.core.security import hash_token
from app.hosts.service import authenticate_runner, ip_literal, note_address
from app.jobs.models import ON_HOST, TERMINAL, Run, RunStatus
from app.jobs.samples import HOUR, MINUTE, SAMPLE_COLUMNS, SAMPLE_FROM, STORE_SUMMARY
from app.jobs.schemas import SAMPLE_FIELDS
from app.runner_api.schemas import SampleIn
from app.runner_api.service import SEEN_EVERY_S, _owned_run, check_renewable

log = logging.getLogger("hostbench.ingest")
FIELDS = SAMPLE_FIELDS  # the insert below and _row() take them in this order
assert FIELDS == tuple(SampleIn.model_fields), "a sample's fields differ between what runners send and what is kept"

# Connections per process: one for every admitted runner call (app.core.admission's run, runner and poll slots:
# 4 + 8 + 4), so an admitted call never waits for one.
POOL_MAX = 16
# How long the pool keeps retrying one lost connection before it gives that attempt up. psycopg_pool's default
# (5 minutes, each retry twice as late as the one before) left every slot of the pool waiting on a retry 8-16 s
# away when PostgreSQL came back from a 20-s outage: renewals then found no connection for seconds (503 "all in
# use", or no answer before the runner's fence: chaos postgres-stop, issue 27). Given up, the attempt frees its
# slot, and the first call after PostgreSQL's return connects at once (calls during the outage never reach the
# pool: _connection answers them from the watcher).
RECONNECT_S = 3.0

_HOST = "select id from hosts where token_hash = %(digest)s and revoked_at is null and deleted_at is null"

# The host heard from: written when last written SEEN_EVERY_S ago or more, or when its address changed
# (app.runner_api.service.note_seen and app.hosts.service.note_address, in one UPDATE that mostly updates nothing).
_SEEN = """
seen as (update hosts set last_seen_at = %(now)s, address = coalesce(cast(%(address)s as varchar), address)
         where id = (select id from h) and exists (select 1 from r)
           and (last_seen_at is null or last_seen_at < %(seen_before)s
                or address is distinct from coalesce(cast(%(address)s as varchar), address)))"""

# The statuses of a run on its host, and of an ended one, as SQL (hostbench_common.runstatus.ON_HOST, TERMINAL;
# constants, never input).
_ON_HOST = "(" + ", ".join(f"'{s.value}'" for s in ON_HOST) + ")"
_TERMINAL = "(" + ", ".join(f"'{s.value}'" for s in TERMINAL) + ")"

_LEASE = f"""
with h as ({_HOST}),
r as (update runs set lease_expires_at = %(until)s, phase = coalesce(cast(%(phase)s as jsonb), runs.phase)
      from (select id, phase as old from runs where id = %(run_id)s) o
      where runs.id = o.id and attempt = %(attempt)s and host_id = (select id from h)
        and status in {_ON_HOST}
      returning lease_expires_at, o.old is distinct from runs.phase as changed),
{_SEEN}
select lease_expires_at, changed from r"""  # noqa: S608 - this module's constants; every value a bound parameter

# One batch: the run locked by its own UPDATE (a run's batches go one at a time), then its phases (what is constant
# over a stretch of samples: threads, repeat, warm-up, unit, op, block size; app.jobs.models.SamplePhase) upserted,
# the samples inserted from unnest(arrays) ON CONFLICT DO NOTHING, and the minute rollup and the host's hour of its
# measured samples (app.jobs.models.HostHour) fed from the rows this statement inserted (a resent batch inserts none,
# so counts once): ten array parameters whatever the batch's
# size, nothing compiled per sample. A sample's run_at is its run's created_at (the partition key: app.jobs.
# partitions). The phases' upsert is DO UPDATE (of nothing that changes) so that it returns the id of a phase
# already stored too. Samples of the current attempt are kept after the run ended (a runner cut off uploads its
# backlog when it comes back); the lease is renewed only while the run is on. Its last column: the run has ended (a
# batch that came after its end: its measured summary, stored at the end, is stored again: app.jobs.samples).
INGEST = f"""
with h as ({_HOST}),
r as (update runs set last_seq = greatest(last_seq, %(max_seq)s),
        lease_expires_at = case when status in {_ON_HOST} then %(until)s else lease_expires_at end
      where id = %(run_id)s and attempt = %(attempt)s and host_id = (select id from h)
      returning id, created_at, experiment, status),
u as (select * from unnest(cast(%(seq)s as bigint[]), cast(%(t)s as float8[]), cast(%(interval_s)s as float8[]),
                           cast(%(threads)s as int[]), cast(%(rep)s as int[]), cast(%(warmup)s as boolean[]),
                           cast(%(value)s as float8[]), cast(%(unit)s as varchar[]), cast(%(op)s as varchar[]),
                           cast(%(block_bytes)s as bigint[]))
             as u(seq, t, interval_s, threads, rep, warmup, value, unit, op, block_bytes)),
ph as (insert into sample_phases as p (run_id, attempt, threads, "repeat", warmup, unit, op, block_bytes)
       select distinct %(run_id)s, %(attempt)s, threads, rep, warmup, unit, op, block_bytes from u
       where exists (select 1 from r)
       on conflict (run_id, attempt, threads, "repeat", warmup, unit, (coalesce(op, '')), (op is null),
                    (coalesce(block_bytes, -1)))
       do update set run_id = p.run_id
       returning id, threads, "repeat", warmup, unit, op, block_bytes),
ins as (insert into samples (run_at, run_id, attempt, seq, phase_id, t, interval_s, value, received_at)
        select (select created_at from r), %(run_id)s, %(attempt)s, u.seq, ph.id, u.t, u.interval_s, u.value, now()
        from u join ph on ph.threads = u.threads and ph."repeat" = u.rep and ph.warmup = u.warmup
                       and ph.unit = u.unit and ph.op is not distinct from u.op
                       and ph.block_bytes is not distinct from u.block_bytes
        on conflict (run_id, attempt, seq, run_at) do nothing
        returning seq, phase_id, t, value),
roll as (insert into sample_minutes as m (run_id, phase_id, minute, n, lo, hi, total)
         select %(run_id)s, phase_id, {MINUTE}, count(*), min(value), max(value), sum(value) from ins group by 2, 3
         on conflict (run_id, phase_id, minute) do update
         set n = m.n + excluded.n, lo = least(m.lo, excluded.lo), hi = greatest(m.hi, excluded.hi),
             total = m.total + excluded.total),
hours as (insert into host_hours as hh (host_id, experiment, unit, op, hour, n, lo, hi, total)
          select (select id from h), (select experiment from r), ph.unit, coalesce(ph.op, ''),
                 {HOUR.format(created_at="(select created_at from r)")}, count(*), min(ins.value), max(ins.value),
                 sum(ins.value)
          from ins join ph on ph.id = ins.phase_id where not ph.warmup group by 3, 4
          on conflict (host_id, experiment, unit, op, hour) do update
          set n = hh.n + excluded.n, lo = least(hh.lo, excluded.lo), hi = greatest(hh.hi, excluded.hi),
              total = hh.total + excluded.total),
{_SEEN}
select exists (select 1 from r), coalesce((select array_agg(seq) from ins), '{{}}'),
       coalesce((select status in {_TERMINAL} from r), false)"""  # noqa: S608 - as _LEASE

_STORED = f"""
select {SAMPLE_COLUMNS} from {SAMPLE_FROM}
where s.run_id = %(run_id)s and s.attempt = %(attempt)s and s.seq = any(cast(%(seqs)s as bigint[]))"""  # noqa: S608

# The common heartbeat (current credential, no inventory): a fleet of 1,000 runners sends 100-200 a second.
_BEAT = """
update hosts set last_seen_at = now(), runner_version = coalesce(cast(%(version)s as varchar), runner_version),
                 address = coalesce(cast(%(address)s as varchar), address)
where token_hash = %(digest)s and revoked_at is null and deleted_at is null
returning rotate_requested_at is not null"""

# One pass of the long poll while nothing is dispatched to the host (an idle fleet's every poll): the runner is
# seen and learns whether a run waits; only then the full claim. By id, not by token: a rotation completed since
# the poll began must not fail it, a revocation must.
_POLL = f"""
update hosts set last_seen_at = now(), address = coalesce(cast(%(address)s as varchar), address)
where id = %(host_id)s and revoked_at is null and deleted_at is null
returning exists (select 1 from runs where runs.host_id = hosts.id and runs.status = '{RunStatus.dispatched.value}')"""  # noqa: S608


_pools: dict[asyncio.AbstractEventLoop, AsyncConnectionPool] = {}
_checks: set[asyncio.Task] = set()  # the pools' checks under way (held, so that none is collected half done)


async def _pool() -> AsyncConnectionPool:
    """This event loop's pool, opened at its first use (each process has one loop; a test client has its own)."""
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        pool = AsyncConnectionPool(
            _libpq_url(get_settings().database_url), min_size=1, max_size=POOL_MAX, timeout=POOL_TIMEOUT_S,
            open=False, name="runner-fast", reconnect_timeout=RECONNECT_S,
            kwargs={"autocommit": True, "application_name": "hostbench-runner-fast", "connect_timeout": 3})
        _pools[loop] = pool
        await pool.open(wait=False)
    return pool


async def close() -> None:
    """Close this event loop's pool (app.reconciler's lifespan, at shutdown)."""
    pool = _pools.pop(asyncio.get_running_loop(), None)
    if pool is not None:
        await pool.close()


def _unreachable() -> Unavailable:
    return Unavailable(f"the database is unavailable ({DB_WATCH.state().detail}); retry shortly", "database")


@asynccontextmanager
async def _connection() -> AsyncIterator[psycopg.AsyncConnection]:
    """A pooled connection in autocommit. PostgreSQL unreachable, as this process's watcher (app.core.dbwatch) sees
    it: 503 at once, as the synchronous pools fail fast, instead of waiting out the pool's timeout."""
    if _unreachable_now():
        raise _unreachable()
    pool = await _pool()
    conn = await _getconn(pool)
    try:
        async with conn:
            try:
                yield conn
            except psycopg.OperationalError:
                if conn.broken:  # PostgreSQL went away (a restart): the idle ones are likely dead too
                    task = asyncio.get_running_loop().create_task(pool.check())
                    _checks.add(task)
                    task.add_done_callback(_checks.discard)
                raise  # app.core.errors: 503 with Retry-After
    finally:
        await pool.putconn(conn)


def _unreachable_now() -> bool:
    state = DB_WATCH.state()
    return DB_WATCH.running and not state.ok and not state.hung


GETCONN_SLICE_S = 0.2  # as often as the watcher probes (app.core.dbwatch)


async def _getconn(pool: AsyncConnectionPool) -> psycopg.AsyncConnection:
    """A connection within POOL_TIMEOUT_S, waited for in slices: PostgreSQL found gone meanwhile (the watcher), the
    call is answered 503 at once. A renewal that came as PostgreSQL went down waited out the whole pool timeout
    for a connection that could not come, and its runner, its answer that late, stopped its kernel ("lease lost:
    server unreachable for 2 s", chaos postgres-stop, 1 of 20 trials)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + POOL_TIMEOUT_S
    while True:
        try:
            return await pool.getconn(timeout=max(0.01, min(GETCONN_SLICE_S, deadline - loop.time())))
        except PoolTimeout as exc:
            if _unreachable_now():
                raise _unreachable() from exc
            if loop.time() >= deadline:
                if not pool.get_stats().get("pool_size"):  # not one connection made: PostgreSQL is away, not busy
                    raise _unreachable() from exc
                raise PoolBusy("runner") from exc


async def _one(sql: str, params: dict[str, Any]) -> tuple | None:
    async with _connection() as conn:
        cur = await conn.execute(sql, params)
        return await cur.fetchone()


def _seen(params: dict[str, Any], address: str | None) -> dict[str, Any]:
    now = utcnow()
    return {**params, "now": now, "seen_before": now - timedelta(seconds=SEEN_EVERY_S), "address": ip_literal(address)}


def _explain(token: str, address: str | None, run_id: int, attempt: int,
             check: Callable[[Run], None] | None = None) -> None:
    """The full path's verdict on what the statement did not match: raises 401, 404 or 409 with the reason, or
    returns (a rotated credential's first use, now completed: the statement will match)."""
    with runner_session() as session:
        host = authenticate_runner(session, token)
        note_address(session, host, address)
        run = _owned_run(session, host, run_id, attempt)
        if check is not None:
            check(run)
        session.rollback()


async def renew_lease(token: str, address: str | None, run_id: int, attempt: int,
                      phase: dict[str, Any] | None = None) -> float:
    """The run's lease renewed, and its phase stored when one came (a changed one is published to the live
    streams, which re-read the run); its new expiry (Unix time)."""
    params = _seen({"run_id": run_id, "attempt": attempt, "phase": json.dumps(phase) if phase is not None else None,
                    "until": utcnow() + timedelta(seconds=get_settings().lease_s)}, address)
    params["digest"] = hash_token(token)
    for _ in range(2):
        row = await _one(_LEASE, params)
        if row is not None:
            if row[1]:
                broker.publish(broker.run_channel(run_id), {"type": "run", "published": time.time()})
            return float(row[0].timestamp())
        await run_in_threadpool(_explain, token, address, run_id, attempt, check_renewable)
    raise Conflict(f"run {run_id} changed while its lease was renewed; retry")


def _row(s: SampleIn) -> tuple:
    return (s.seq, float(s.t), float(s.interval_s), s.threads, s.repeat, s.warmup, float(s.value), s.unit, s.op,
            s.block_bytes)


def ingest_params(token: str, address: str | None, run_id: int, attempt: int, rows: list[tuple]) -> dict[str, Any]:
    """INGEST's parameters for a batch of rows (each as _row() makes it, one per seq): its arrays, the lease and
    the credential. `./hostbench size` times the same statement with them (harness/hostbench_harness/load/size.py)."""
    cols = list(zip(*rows, strict=True))
    params = _seen({
        "run_id": run_id, "attempt": attempt, "max_seq": max(cols[0]),
        "until": utcnow() + timedelta(seconds=get_settings().lease_s),
        "seq": list(cols[0]), "t": list(cols[1]), "interval_s": list(cols[2]), "threads": list(cols[3]),
        "rep": list(cols[4]), "warmup": list(cols[5]), "value": list(cols[6]), "unit": list(cols[7]),
        "op": list(cols[8]), "block_bytes": list(cols[9])}, address)
    params["digest"] = hash_token(token)
    return params


async def ingest(token: str, address: str | None, run_id: int, attempt: int,
                 samples: list[SampleIn]) -> tuple[int, int, list[int]]:
    """Store a batch; returns (inserted, max_seq, conflicting seqs). Idempotent: a resent batch inserts nothing
    twice. A seq already stored with *different* fields is a conflict: the stored sample stays, the seq is listed
    in the acknowledgement's `conflicts`, and the server logs it; it is never silently dropped or overwritten."""
    rows: dict[int, tuple] = {}
    conflicts: set[int] = set()
    for s in samples:
        r = _row(s)
        seen = rows.get(s.seq)
        if seen is None:
            rows[s.seq] = r
        elif seen != r:
            conflicts.add(s.seq)  # the same seq twice in one batch, with different fields: the first one counts
    max_seq = max(rows)
    params = ingest_params(token, address, run_id, attempt, list(rows.values()))
    for _ in range(2):
        async with _connection() as conn:
            owned, stored_now, ended = await (await conn.execute(INGEST, params)).fetchone()  # type: ignore[misc]
            if owned:
                inserted = set(stored_now)
                if inserted and ended:  # after the run's end: its summary counts these too
                    async with conn.transaction():
                        for sql in STORE_SUMMARY:
                            await conn.execute(sql, {"lo": run_id, "hi": run_id})
                resent = [seq for seq in rows if seq not in inserted]
                if resent:  # a resend: the stored fields must be the same ones
                    cur = await conn.execute(_STORED, {"run_id": run_id, "attempt": attempt, "seqs": resent})
                    for stored in await cur.fetchall():
                        if tuple(stored) != rows[stored[0]]:
                            conflicts.add(stored[0])
                break
        await run_in_threadpool(_explain, token, address, run_id, attempt)
    else:
        raise Conflict(f"run {run_id} changed while its samples were stored; retry")
    if conflicts:
        log.warning("run %s attempt %s: %d sample(s) resent with different fields refused (the stored ones stay): "
                    "seq %s", run_id, attempt, len(conflicts), sorted(conflicts)[:20])
    if inserted:  # acknowledged after the statement's commit; the live streams hear of them now
        fresh = [dict(zip(FIELDS, rows[seq], strict=True)) for seq in rows if seq in inserted]
        broker.publish(broker.run_channel(run_id), {"type": "samples", "samples": fresh, "published": time.time()})
    return len(inserted), max_seq, sorted(conflicts)


async def beat(token: str, version: str | None, address: str | None) -> bool | None:
    """The common heartbeat: whether the admin asked for a new credential; None when the statement matched no
    host (the full path then decides)."""
    row = await _one(_BEAT, {"version": version or None, "digest": hash_token(token), "address": ip_literal(address)})
    return None if row is None else bool(row[0])


async def host_of(token: str) -> int | None:
    """The host whose current credential this is (None: the full path decides: a rotated one, or none)."""
    row = await _one(_HOST, {"digest": hash_token(token)})
    return None if row is None else int(row[0])


async def poll_step(host_id: int, address: str | None) -> bool:
    """One pass of a long poll: the runner seen; whether a run waits for its host. 401 once the host is revoked."""
    row = await _one(_POLL, {"host_id": host_id, "address": ip_literal(address)})
    if row is None:
        raise Unauthorized("runner credential unknown or revoked")
    return bool(row[0])
