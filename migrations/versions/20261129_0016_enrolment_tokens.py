"""Enrolment tokens for many hosts (a name, a use count or unlimited, labels, revocable) and hosts.machine_id
(a host that joins again from the same machine keeps its row and history)

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-29 01:50:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0016'
down_revision: str | None = '0015'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), 'postgresql')


def upgrade() -> None:
    op.add_column('registration_tokens', sa.Column('name', sa.String(128), nullable=True))
    op.add_column('registration_tokens', sa.Column('max_uses', sa.Integer(), nullable=True))
    op.add_column('registration_tokens', sa.Column('uses_left', sa.Integer(), nullable=True))
    op.add_column('registration_tokens', sa.Column('uses', sa.Integer(), nullable=False, server_default='0'))
    op.add_column('registration_tokens', sa.Column('labels', JSON, nullable=False, server_default='{}'))
    op.add_column('registration_tokens', sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True))
    # Every token before this one was single use.
    op.execute("UPDATE registration_tokens SET max_uses = 1, "
               "uses_left = CASE WHEN used_at IS NULL THEN 1 ELSE 0 END, "
               "uses = CASE WHEN used_at IS NULL THEN 0 ELSE 1 END")
    op.add_column('hosts', sa.Column('machine_id', sa.String(64), nullable=True))
    op.create_index(op.f('ix_hosts_machine_id'), 'hosts', ['machine_id'])


def downgrade() -> None:
    op.drop_index(op.f('ix_hosts_machine_id'), table_name='hosts')
    op.drop_column('hosts', 'machine_id')
    for column in ('revoked_at', 'labels', 'uses', 'uses_left', 'max_uses', 'name'):
        op.drop_column('registration_tokens', column)
