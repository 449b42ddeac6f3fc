"""trends: thresholds per metric, events (thresholds crossed, changes found), runs checked, notification targets

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26 01:30:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0008'
down_revision: str | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'trend_thresholds',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('host_id', sa.Integer(), nullable=True),
        sa.Column('label_key', sa.String(length=16), nullable=True),
        sa.Column('label_value', sa.String(length=64), nullable=True),
        sa.Column('experiment', sa.String(length=32), nullable=False),
        sa.Column('op', sa.String(length=32), nullable=True),
        sa.Column('threads', sa.Integer(), nullable=False),
        sa.Column('block_bytes', sa.BigInteger(), nullable=True),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('value', sa.Float(), nullable=False),
        sa.Column('created_by', sa.String(length=64), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['host_id'], ['hosts.id'], name=op.f('fk_trend_thresholds_host_id_hosts'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_trend_thresholds')),
    )
    op.create_index(op.f('ix_trend_thresholds_host_id'), 'trend_thresholds', ['host_id'], unique=False)
    op.create_table(
        'trend_events',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('run_id', sa.Integer(), nullable=False),
        sa.Column('host_id', sa.Integer(), nullable=False),
        sa.Column('threshold_id', sa.Integer(), nullable=True),
        sa.Column('experiment', sa.String(length=32), nullable=False),
        sa.Column('op', sa.String(length=32), nullable=True),
        sa.Column('threads', sa.Integer(), nullable=False),
        sa.Column('block_bytes', sa.BigInteger(), nullable=True),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('value', sa.Float(), nullable=False),
        sa.Column('unit', sa.String(length=16), nullable=False),
        sa.Column('text', sa.String(length=1000), nullable=False),
        sa.Column('webhook_status', sa.String(length=16), nullable=False),
        sa.Column('webhook_detail', sa.String(length=500), nullable=True),
        sa.Column('email_status', sa.String(length=16), nullable=False),
        sa.Column('email_detail', sa.String(length=500), nullable=True),
        sa.ForeignKeyConstraint(['host_id'], ['hosts.id'], name=op.f('fk_trend_events_host_id_hosts'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_trend_events_run_id_runs'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['threshold_id'], ['trend_thresholds.id'],
                                name=op.f('fk_trend_events_threshold_id_trend_thresholds'), ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_trend_events')),
    )
    op.create_index(op.f('ix_trend_events_at'), 'trend_events', ['at'], unique=False)
    op.create_index(op.f('ix_trend_events_host_id'), 'trend_events', ['host_id'], unique=False)
    op.create_index(op.f('ix_trend_events_run_id'), 'trend_events', ['run_id'], unique=False)
    op.create_table(
        'trend_checks',
        sa.Column('run_id', sa.Integer(), nullable=False),
        sa.Column('checked_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_trend_checks_run_id_runs'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('run_id', name=op.f('pk_trend_checks')),
    )
    op.create_table(
        'trend_notify',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('webhook_url', sa.String(length=2000), nullable=True),
        sa.Column('email_to', sa.String(length=320), nullable=True),
        sa.Column('updated_by', sa.String(length=64), nullable=True),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_trend_notify')),
    )


def downgrade() -> None:
    op.drop_table('trend_notify')
    op.drop_table('trend_checks')
    op.drop_index(op.f('ix_trend_events_run_id'), table_name='trend_events')
    op.drop_index(op.f('ix_trend_events_host_id'), table_name='trend_events')
    op.drop_index(op.f('ix_trend_events_at'), table_name='trend_events')
    op.drop_table('trend_events')
    op.drop_index(op.f('ix_trend_thresholds_host_id'), table_name='trend_thresholds')
    op.drop_table('trend_thresholds')
