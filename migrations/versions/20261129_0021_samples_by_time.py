"""Samples by time: the sample table partitioned by month of its run's created_at, narrowed (what is constant
within a phase in sample_phases, once), and a minute-level rollup (sample_minutes). Every existing sample moves,
with its id; the id sequence goes on where it was.

Revision ID: 0021
Revises: 0022 (main's head when this was rebased; 0016 before)
Create Date: 2026-11-29 03:20:00.000000
"""
from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from app.jobs.partitions import AHEAD_MONTHS, month_start, name_of, next_month

revision: str = '0021'
down_revision: str | None = '0018'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# t's minute as the rollup keys it, clamped into an integer (as app.jobs.samples.MINUTE when this was written)
MINUTE = "cast(least(greatest(floor(t / 60), -2147483648), 2147483647) as integer)"


def upgrade() -> None:
    op.create_table(
        'sample_phases',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('run_id', sa.Integer(), nullable=False),
        sa.Column('attempt', sa.Integer(), nullable=False),
        sa.Column('threads', sa.Integer(), nullable=False),
        sa.Column('repeat', sa.Integer(), nullable=False),
        sa.Column('warmup', sa.Boolean(), nullable=False),
        sa.Column('unit', sa.String(length=16), nullable=False),
        sa.Column('op', sa.String(length=32), nullable=True),
        sa.Column('block_bytes', sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_sample_phases_run_id_runs'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_sample_phases')),
    )
    op.execute("create unique index uq_sample_phases_key on sample_phases (run_id, attempt, threads, \"repeat\", "
               "warmup, unit, (coalesce(op, '')), (op is null), (coalesce(block_bytes, -1)))")
    op.create_table(
        'sample_minutes',
        sa.Column('run_id', sa.Integer(), nullable=False),
        sa.Column('phase_id', sa.Integer(), nullable=False),
        sa.Column('minute', sa.Integer(), nullable=False),
        sa.Column('n', sa.Integer(), nullable=False),
        sa.Column('lo', sa.Float(), nullable=False),
        sa.Column('hi', sa.Float(), nullable=False),
        sa.Column('total', sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_sample_minutes_run_id_runs'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['phase_id'], ['sample_phases.id'],
                                name=op.f('fk_sample_minutes_phase_id_sample_phases'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('run_id', 'phase_id', 'minute', name=op.f('pk_sample_minutes')),
    )
    # the old table steps aside; its sequence outlives it and numbers the new rows
    op.execute("alter table samples rename to samples_old")
    op.execute("alter table samples_old drop constraint pk_samples, drop constraint uq_samples_run_id_attempt_seq, "
               "drop constraint fk_samples_run_id_runs")
    op.execute("alter sequence samples_id_seq owned by none")
    op.execute("""
create table samples (
    run_at timestamptz not null,
    id bigint not null default nextval('samples_id_seq'),
    seq bigint not null,
    t double precision not null,
    interval_s double precision not null,
    value double precision not null,
    received_at timestamptz not null,
    run_id integer not null,
    attempt integer not null,
    phase_id integer not null,
    constraint uq_samples_run_id_attempt_seq_run_at unique (run_id, attempt, seq, run_at),
    constraint fk_samples_run_id_runs foreign key (run_id) references runs (id) on delete cascade
) partition by range (run_at)""")
    op.execute("alter sequence samples_id_seq owned by samples.id")
    op.execute("create table samples_default partition of samples default")
    first = op.get_bind().scalar(sa.text("select min(created_at) from runs"))
    now = datetime.now(UTC)
    lo = month_start(first or now)
    end = now
    for _ in range(AHEAD_MONTHS):
        end = next_month(month_start(end))
    while lo <= end:
        hi = next_month(lo)
        op.execute(f"create table {name_of(lo)} partition of samples for values from ('{lo.isoformat()}') "
                   f"to ('{hi.isoformat()}')")
        lo = hi
    op.execute("""
insert into sample_phases (run_id, attempt, threads, "repeat", warmup, unit, op, block_bytes)
select distinct run_id, attempt, threads, "repeat", warmup, unit, op, block_bytes from samples_old""")
    op.execute("""
insert into samples (run_at, id, seq, t, interval_s, value, received_at, run_id, attempt, phase_id)
select r.created_at, o.id, o.seq, o.t, o.interval_s, o.value, o.received_at, o.run_id, o.attempt, p.id
from samples_old o join runs r on r.id = o.run_id
join sample_phases p on p.run_id = o.run_id and p.attempt = o.attempt and p.threads = o.threads
  and p."repeat" = o."repeat" and p.warmup = o.warmup and p.unit = o.unit
  and coalesce(p.op, '') = coalesce(o.op, '') and (p.op is null) = (o.op is null)
  and coalesce(p.block_bytes, -1) = coalesce(o.block_bytes, -1)""")
    moved, old = op.get_bind().execute(sa.text(
        "select (select count(*) from samples), (select count(*) from samples_old)")).one()
    if moved != old:  # never: every old row has its run (a foreign key) and its phase (made just above)
        raise RuntimeError(f"samples_by_time: {old} samples, {moved} moved; nothing changed")
    op.execute(f"""
insert into sample_minutes (run_id, phase_id, minute, n, lo, hi, total)
select run_id, phase_id, {MINUTE}, count(*), min(value), max(value), sum(value)
from samples group by 1, 2, 3""")  # noqa: S608 - a constant
    op.execute("drop table samples_old")


def downgrade() -> None:
    op.execute("alter table samples rename to samples_new")
    op.execute("alter table samples_new drop constraint uq_samples_run_id_attempt_seq_run_at, "
               "drop constraint fk_samples_run_id_runs")
    op.execute("alter sequence samples_id_seq owned by none")
    op.create_table(
        'samples',
        sa.Column('id', sa.BigInteger(), server_default=sa.text("nextval('samples_id_seq')"), nullable=False),
        sa.Column('run_id', sa.Integer(), nullable=False),
        sa.Column('attempt', sa.Integer(), nullable=False),
        sa.Column('seq', sa.BigInteger(), nullable=False),
        sa.Column('t', sa.Float(), nullable=False),
        sa.Column('interval_s', sa.Float(), nullable=False),
        sa.Column('threads', sa.Integer(), nullable=False),
        sa.Column('repeat', sa.Integer(), nullable=False),
        sa.Column('warmup', sa.Boolean(), nullable=False),
        sa.Column('value', sa.Float(), nullable=False),
        sa.Column('unit', sa.String(length=16), nullable=False),
        sa.Column('op', sa.String(length=32), nullable=True),
        sa.Column('block_bytes', sa.BigInteger(), nullable=True),
        sa.Column('received_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_samples_run_id_runs'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_samples')),
        sa.UniqueConstraint('run_id', 'attempt', 'seq', name=op.f('uq_samples_run_id_attempt_seq')),
    )
    op.execute("alter sequence samples_id_seq owned by samples.id")
    op.execute("""
insert into samples (id, run_id, attempt, seq, t, interval_s, threads, "repeat", warmup, value, unit, op, block_bytes,
                     received_at)
select s.id, s.run_id, s.attempt, s.seq, s.t, s.interval_s, p.threads, p."repeat", p.warmup, s.value, p.unit, p.op,
       p.block_bytes, s.received_at
from samples_new s join sample_phases p on p.id = s.phase_id""")
    op.execute("drop table samples_new")
    op.drop_table('sample_minutes')
    op.drop_table('sample_phases')
