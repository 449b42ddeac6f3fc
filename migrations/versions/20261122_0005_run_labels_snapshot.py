"""run labels snapshot: the host's instance labels when the run was handed out

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22 12:00:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('runs', sa.Column('labels_snapshot', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=True))
    # runs handed out before this migration: the host's labels now are the best record there is
    op.execute("UPDATE runs SET labels_snapshot = hosts.labels FROM hosts "
               "WHERE runs.host_id = hosts.id AND runs.claimed_at IS NOT NULL")


def downgrade() -> None:
    op.drop_column('runs', 'labels_snapshot')
