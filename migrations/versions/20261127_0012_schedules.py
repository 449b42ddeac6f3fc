"""schedules: a suite started again and again (interval or cron) on hosts or a label's hosts, and its firings

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27 21:30:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0012'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql')


def upgrade() -> None:
    op.create_table(
        'schedules',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('title', sa.String(length=200), nullable=False),
        sa.Column('suite', sa.String(length=64), nullable=False),
        sa.Column('host_ids', JSON, nullable=True),
        sa.Column('label_key', sa.String(length=64), nullable=True),
        sa.Column('label_value', sa.String(length=64), nullable=True),
        sa.Column('interval_s', sa.Integer(), nullable=True),
        sa.Column('cron', sa.String(length=100), nullable=True),
        sa.Column('enabled', sa.Boolean(), nullable=False),
        sa.Column('next_fire_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('created_by', sa.String(length=64), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_schedules')),
    )
    # beat's query: enabled schedules whose next_fire_at has come
    op.create_index('ix_schedules_due', 'schedules', ['enabled', 'next_fire_at'], unique=False)
    op.create_table(
        'schedule_firings',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('schedule_id', sa.Integer(), nullable=False),
        sa.Column('fired_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('due_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('trigger', sa.String(length=16), nullable=False),
        sa.Column('outcome', sa.String(length=16), nullable=False),
        sa.Column('reason', sa.String(length=2000), nullable=True),
        sa.Column('suite_run_id', sa.Integer(), nullable=True),
        sa.Column('host_ids', JSON, nullable=False),
        sa.Column('skipped', JSON, nullable=False),
        sa.ForeignKeyConstraint(['schedule_id'], ['schedules.id'],
                                name=op.f('fk_schedule_firings_schedule_id_schedules'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['suite_run_id'], ['suite_runs.id'],
                                name=op.f('fk_schedule_firings_suite_run_id_suite_runs'), ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_schedule_firings')),
    )
    op.create_index(op.f('ix_schedule_firings_schedule_id'), 'schedule_firings', ['schedule_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_schedule_firings_schedule_id'), table_name='schedule_firings')
    op.drop_table('schedule_firings')
    op.drop_index('ix_schedules_due', table_name='schedules')
    op.drop_table('schedules')
