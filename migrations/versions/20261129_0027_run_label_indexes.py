"""History's label filters by index ranges (issue 31): one btree index per instance label on (the run's snapshot of
it, id), in place of the GIN index on the whole snapshot. A page of the newest runs under a label is then one
backward range of its label's index, 51 entries, where the GIN index gave a bitmap of every run ever handed out
under the label (100,000 at a million runs), each read and sorted for every page (docs/scaling.md).

The expressions are app.jobs.models.snapshot_label_sql's, written out here as a migration is: what it made then.

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-29 10:30:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0027'
down_revision: str | None = '0026'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEYS = ('provider', 'instance_type', 'region')


def upgrade() -> None:
    for key in KEYS:
        op.create_index(f'ix_runs_label_{key}', 'runs', [sa.text(f"(labels_snapshot ->> '{key}')"), 'id'])
    op.drop_index('ix_runs_labels_snapshot', table_name='runs')


def downgrade() -> None:
    op.create_index('ix_runs_labels_snapshot', 'runs', ['labels_snapshot'], postgresql_using='gin',
                    postgresql_ops={'labels_snapshot': 'jsonb_path_ops'})
    for key in KEYS:
        op.drop_index(f'ix_runs_label_{key}', table_name='runs')
