"""imported results: reference-tool outputs parsed on the server and stored as history rows of a host

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26 03:00:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0009'
down_revision: str | None = '0008'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'imported_results',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('host_id', sa.Integer(), nullable=False),
        sa.Column('tool', sa.String(length=16), nullable=False),
        sa.Column('format', sa.String(length=32), nullable=False),
        sa.Column('file_name', sa.String(length=255), nullable=True),
        sa.Column('metrics', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'),
                  nullable=False),
        sa.Column('imported_by', sa.String(length=64), nullable=False),
        sa.Column('imported_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['host_id'], ['hosts.id'], name=op.f('fk_imported_results_host_id_hosts'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_imported_results')),
    )
    op.create_index(op.f('ix_imported_results_host_id'), 'imported_results', ['host_id'], unique=False)
    op.create_index(op.f('ix_imported_results_imported_at'), 'imported_results', ['imported_at'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_imported_results_imported_at'), table_name='imported_results')
    op.drop_index(op.f('ix_imported_results_host_id'), table_name='imported_results')
    op.drop_table('imported_results')
