"""people and their credentials: users, sessions, API tokens, sign-in links, the audit log; single-use
registration tokens; credential rotation and deletion of hosts; who created a job and who cancelled a run

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 15:00:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        'users',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('name', sa.String(64), nullable=False),
        sa.Column('role', sa.String(16), nullable=False),
        sa.Column('password_hash', sa.String(255), nullable=True),
        sa.Column('created_at', TS, nullable=False),
        sa.Column('disabled_at', TS, nullable=True),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_users')),
        sa.UniqueConstraint('name', name=op.f('uq_users_name')),
        sa.CheckConstraint("role in ('viewer', 'operator', 'admin')", name=op.f('ck_users_role')),
    )
    for table, extra in (
        ('user_sessions', [sa.Column('csrf_token', sa.String(64), nullable=False),
                           sa.Column('expires_at', TS, nullable=False),
                           sa.Column('last_seen_at', TS, nullable=False)]),
        ('api_tokens', [sa.Column('name', sa.String(64), nullable=False),
                        sa.Column('expires_at', TS, nullable=True),
                        sa.Column('last_used_at', TS, nullable=True),
                        sa.Column('revoked_at', TS, nullable=True)]),
        ('sign_in_links', [sa.Column('expires_at', TS, nullable=False),
                           sa.Column('used_at', TS, nullable=True)]),
    ):
        op.create_table(
            table,
            sa.Column('id', sa.Integer(), nullable=False),
            sa.Column('user_id', sa.Integer(), nullable=False),
            sa.Column('token_hash', sa.String(64), nullable=False),
            sa.Column('created_at', TS, nullable=False),
            *extra,
            sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f(f'fk_{table}_user_id_users'),
                                    ondelete='CASCADE'),
            sa.PrimaryKeyConstraint('id', name=op.f(f'pk_{table}')),
            sa.UniqueConstraint('token_hash', name=op.f(f'uq_{table}_token_hash')),
        )
        op.create_index(op.f(f'ix_{table}_user_id'), table, ['user_id'])
    op.create_table(
        'audit_events',
        sa.Column('id', sa.BigInteger(), nullable=False),
        sa.Column('at', TS, nullable=False),
        sa.Column('user_name', sa.String(64), nullable=False),
        sa.Column('action', sa.String(48), nullable=False),
        sa.Column('target', sa.String(160), nullable=False),
        sa.Column('detail', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'),
                  nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_events')),
    )
    op.create_index(op.f('ix_audit_events_at'), 'audit_events', ['at'])
    op.add_column('hosts', sa.Column('next_token_hash', sa.String(64), nullable=True))
    op.create_unique_constraint(op.f('uq_hosts_next_token_hash'), 'hosts', ['next_token_hash'])
    op.add_column('hosts', sa.Column('rotate_requested_at', TS, nullable=True))
    op.add_column('hosts', sa.Column('deleted_at', TS, nullable=True))
    op.add_column('registration_tokens', sa.Column('created_by', sa.String(64), nullable=True))
    op.add_column('registration_tokens', sa.Column('used_at', TS, nullable=True))
    op.add_column('registration_tokens', sa.Column('host_id', sa.Integer(), nullable=True))
    op.add_column('jobs', sa.Column('created_by', sa.String(64), nullable=True))
    op.add_column('runs', sa.Column('cancelled_by', sa.String(64), nullable=True))


def downgrade() -> None:
    op.drop_column('runs', 'cancelled_by')
    op.drop_column('jobs', 'created_by')
    for col in ('host_id', 'used_at', 'created_by'):
        op.drop_column('registration_tokens', col)
    for col in ('deleted_at', 'rotate_requested_at'):
        op.drop_column('hosts', col)
    op.drop_constraint(op.f('uq_hosts_next_token_hash'), 'hosts', type_='unique')
    op.drop_column('hosts', 'next_token_hash')
    op.drop_table('audit_events')
    for table in ('sign_in_links', 'api_tokens', 'user_sessions'):
        op.drop_table(table)
    op.drop_table('users')
