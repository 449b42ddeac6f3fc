"""Expected bands (declared, versioned), health checks over hosts and each host's verdict; hosts.health, the
latest verdict of each check a host had (issue 29)

Revision ID: 0017
Revises: 0020
Create Date: 2026-11-29 03:30:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0017'
down_revision: str | None = '0020'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), 'postgresql')
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        'bands',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('kind', sa.String(200), nullable=False),
        sa.Column('experiment', sa.String(32), nullable=False),
        sa.Column('op', sa.String(32), nullable=True),
        sa.Column('threads', sa.Integer(), nullable=False),
        sa.Column('block_bytes', sa.BigInteger(), nullable=True),
        sa.Column('version', sa.Integer(), nullable=False),
        sa.Column('target', sa.Float(), nullable=True),
        sa.Column('lower', sa.Float(), nullable=True),
        sa.Column('upper', sa.Float(), nullable=True),
        sa.Column('of_peak', sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column('unit', sa.String(16), nullable=False, server_default=''),
        sa.Column('note', sa.String(2000), nullable=False, server_default=''),
        sa.Column('removed', sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column('set_by', sa.String(64), nullable=True),
        sa.Column('set_at', TS, nullable=False),
    )
    op.create_index('uq_bands_version', 'bands',
                    ['kind', 'experiment', sa.text("coalesce(op, '')"), 'threads',
                     sa.text('coalesce(block_bytes, -1)'), 'version'], unique=True)
    op.create_table(
        'health_checks',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('suite', sa.String(32), nullable=False),
        sa.Column('title', sa.String(200), nullable=False),
        sa.Column('suite_run_id', sa.Integer(), sa.ForeignKey('suite_runs.id', ondelete='SET NULL'), nullable=True),
        sa.Column('host_ids', JSON, nullable=False),
        sa.Column('label', sa.String(200), nullable=True),
        sa.Column('kind_by', sa.String(64), nullable=False, server_default='cpu'),
        sa.Column('created_by', sa.String(64), nullable=True),
        sa.Column('created_at', TS, nullable=False),
        sa.Column('judged_at', TS, nullable=True),
    )
    op.create_index('ix_health_checks_unjudged', 'health_checks', ['id'], postgresql_where=sa.text('judged_at IS NULL'))
    op.create_table(
        'host_verdicts',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('check_id', sa.Integer(), sa.ForeignKey('health_checks.id', ondelete='CASCADE'), nullable=False,
                  index=True),
        sa.Column('host_id', sa.Integer(), sa.ForeignKey('hosts.id', ondelete='CASCADE'), nullable=False, index=True),
        sa.Column('suite', sa.String(32), nullable=False),
        sa.Column('verdict', sa.String(16), nullable=False),
        sa.Column('previous', sa.String(16), nullable=True),
        sa.Column('judged_at', TS, nullable=False),
        sa.Column('figures', JSON, nullable=False),
        sa.Column('webhook_status', sa.String(16), nullable=False, server_default='skipped'),
        sa.Column('webhook_detail', sa.String(500), nullable=True),
        sa.Column('webhook_tries', sa.Integer(), nullable=False, server_default='0'),
    )
    op.add_column('hosts', sa.Column('health', JSON, nullable=False, server_default='{}'))


def downgrade() -> None:
    op.drop_column('hosts', 'health')
    op.drop_table('host_verdicts')
    op.drop_index('ix_health_checks_unjudged', table_name='health_checks')
    op.drop_table('health_checks')
    op.drop_index('uq_bands_version', table_name='bands')
    op.drop_table('bands')
