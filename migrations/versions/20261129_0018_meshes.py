"""Hosts tested together: meshes (all pairs in rounds, many to one) and the jobs of each, with their round

Revision ID: 0018
Revises: 0022
Create Date: 2026-11-29 03:30:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0018'
down_revision: str | None = '0022'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), 'postgresql')


def upgrade() -> None:
    op.create_table(
        'meshes',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('mode', sa.String(24), nullable=False),
        sa.Column('host_ids', JSON, nullable=False),
        sa.Column('server_host_id', sa.Integer(), nullable=True),
        sa.Column('ops', JSON, nullable=False),
        sa.Column('params', JSON, nullable=False),
        sa.Column('rounds', sa.Integer(), nullable=False),
        sa.Column('created_by', sa.String(64), nullable=True),
        sa.Column('cancelled_by', sa.String(64), nullable=True),
    )
    op.create_index(op.f('ix_meshes_created_at'), 'meshes', ['created_at'])
    op.create_table(
        'mesh_jobs',
        sa.Column('job_id', sa.Integer(), sa.ForeignKey('jobs.id', ondelete='CASCADE'), primary_key=True),
        sa.Column('mesh_id', sa.Integer(), sa.ForeignKey('meshes.id', ondelete='CASCADE'), nullable=False),
        sa.Column('round', sa.Integer(), nullable=False),
    )
    op.create_index(op.f('ix_mesh_jobs_mesh_id'), 'mesh_jobs', ['mesh_id'])


def downgrade() -> None:
    op.drop_index(op.f('ix_mesh_jobs_mesh_id'), table_name='mesh_jobs')
    op.drop_table('mesh_jobs')
    op.drop_index(op.f('ix_meshes_created_at'), table_name='meshes')
    op.drop_table('meshes')
