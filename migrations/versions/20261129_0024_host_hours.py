"""A host's hourly rollup per figure (host_hours: app.jobs.models.HostHour), what a host's trend over a year reads,
filled from the minute rollup that existing databases already hold (which outlives their samples).

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-29 06:40:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0024'
down_revision: str | None = '0023'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'host_hours',
        sa.Column('host_id', sa.Integer(), nullable=False),
        sa.Column('experiment', sa.String(length=32), nullable=False),
        sa.Column('unit', sa.String(length=16), nullable=False),
        sa.Column('op', sa.String(length=32), nullable=False),
        sa.Column('hour', sa.DateTime(timezone=True), nullable=False),
        sa.Column('n', sa.BigInteger(), nullable=False),
        sa.Column('lo', sa.Float(), nullable=False),
        sa.Column('hi', sa.Float(), nullable=False),
        sa.Column('total', sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(['host_id'], ['hosts.id'], name=op.f('fk_host_hours_host_id_hosts'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('host_id', 'experiment', 'unit', 'op', 'hour', name=op.f('pk_host_hours')),
    )
    # the hours of what is stored already: the minute rollup of every run's measured phases (as the ingest
    # statement, app.runner_api.fast.INGEST, writes it from now on)
    op.execute("""
insert into host_hours (host_id, experiment, unit, op, hour, n, lo, hi, total)
select r.host_id, r.experiment, p.unit, coalesce(p.op, ''), date_trunc('hour', r.created_at, 'UTC'),
       sum(m.n), min(m.lo), max(m.hi), sum(m.total)
from sample_minutes m join sample_phases p on p.id = m.phase_id join runs r on r.id = m.run_id
where not p.warmup
group by 1, 2, 3, 4, 5""")


def downgrade() -> None:
    op.drop_table('host_hours')
