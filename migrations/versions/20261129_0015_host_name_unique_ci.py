"""hosts: a live host's name is unique whatever its case (lower(name), deleted hosts excluded)

Existing look-alikes are kept, never dropped: every live host whose name equals an older live host's in another
case gets its id appended ("web-1" and "WEB-1" become "web-1" and "WEB-1 (host 7)"), so the index can be built
and each host stays reachable under a name that says which one it is.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-29 01:00:00.000000
"""
from collections.abc import Sequence

from alembic import op

revision: str = '0015'
down_revision: str | None = '0014'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("""
        UPDATE hosts SET name = left(name, 128 - length(' (host ' || id || ')')) || ' (host ' || id || ')'
        WHERE deleted_at IS NULL AND EXISTS (
            SELECT 1 FROM hosts older
            WHERE older.deleted_at IS NULL AND lower(older.name) = lower(hosts.name) AND older.id < hosts.id)
    """)
    op.execute("CREATE UNIQUE INDEX uq_hosts_live_name_ci ON hosts (lower(name)) WHERE deleted_at IS NULL")


def downgrade() -> None:
    op.execute("DROP INDEX uq_hosts_live_name_ci")
