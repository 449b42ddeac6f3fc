"""suite runs: a suite started on some hosts; its jobs point at it (jobs.suite_run_id)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 03:00:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0010'
down_revision: str | None = '0009'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql')


def upgrade() -> None:
    op.create_table(
        'suite_runs',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('suite', sa.String(length=64), nullable=False),
        sa.Column('title', sa.String(length=200), nullable=False),
        sa.Column('host_ids', JSON, nullable=False),
        sa.Column('skipped', JSON, nullable=False),
        sa.Column('expected_duration_s', sa.Float(), nullable=False),
        sa.Column('created_by', sa.String(length=64), nullable=True),
        sa.Column('cancelled_by', sa.String(length=64), nullable=True),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_suite_runs')),
    )
    op.create_index(op.f('ix_suite_runs_created_at'), 'suite_runs', ['created_at'], unique=False)
    op.add_column('jobs', sa.Column('suite_run_id', sa.Integer(), nullable=True))
    op.create_index(op.f('ix_jobs_suite_run_id'), 'jobs', ['suite_run_id'], unique=False)
    op.create_foreign_key(op.f('fk_jobs_suite_run_id_suite_runs'), 'jobs', 'suite_runs', ['suite_run_id'], ['id'],
                          ondelete='SET NULL')


def downgrade() -> None:
    op.drop_constraint(op.f('fk_jobs_suite_run_id_suite_runs'), 'jobs', type_='foreignkey')
    op.drop_index(op.f('ix_jobs_suite_run_id'), table_name='jobs')
    op.drop_column('jobs', 'suite_run_id')
    op.drop_index(op.f('ix_suite_runs_created_at'), table_name='suite_runs')
    op.drop_table('suite_runs')
