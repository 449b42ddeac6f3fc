"""suite_runs.peer_host_id: a host that takes part in a suite's two-host items only (it serves; each host picked
drives to it)

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28 05:00:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0013'
down_revision: str | None = '0012'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('suite_runs', sa.Column('peer_host_id', sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column('suite_runs', 'peer_host_id')
