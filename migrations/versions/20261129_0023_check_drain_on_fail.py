"""health_checks.drain_on_fail: a check may drain its FAILed hosts' Slurm nodes

Revision ID: 0023
Revises: 0017
Create Date: 2026-11-29
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0023'
down_revision: str | None = '0017'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('health_checks', sa.Column('drain_on_fail', sa.Boolean(), server_default=sa.false(),
                                             nullable=False))


def downgrade() -> None:
    op.drop_column('health_checks', 'drain_on_fail')
