"""runs.status constrained to the run status's values (hostbench_common.runstatus.RunStatus)

Revision ID: 0022
Revises: 0016
Create Date: 2026-11-29 03:30:00.000000
"""
from collections.abc import Sequence

from alembic import op

revision: str = '0022'
down_revision: str | None = '0016'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The values as of this revision, written here because a migration must not change when the code does: a status
# added later brings its own migration (backend/tests/test_run_status.py compares the database with RunStatus).
VALUES = ('queued', 'dispatched', 'running', 'succeeded', 'failed', 'untrusted', 'cancelled')


def upgrade() -> None:
    op.create_check_constraint(op.f('ck_runs_status'), 'runs', "status IN (" + ", ".join(f"'{v}'" for v in VALUES) + ")")


def downgrade() -> None:
    op.drop_constraint(op.f('ck_runs_status'), 'runs', type_='check')
