"""Results stored once (issue 31): the inputs a stored result was computed from (runs.result_basis: the code's and
the host's peaks version), a flag for a result waiting for its background recompute (runs.result_stale), the
headline and verdict lists read (runs.headline, runs.verdict), a host's peaks version (hosts.peaks_version), and
indexes for the History page's label filters and for the recompute sweep.

Revision ID: 0020
Revises: 0021
Create Date: 2026-11-29 03:30:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0020'
down_revision: str | None = '0021'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), 'postgresql')


def upgrade() -> None:
    op.add_column('hosts', sa.Column('peaks_version', sa.Integer(), nullable=False, server_default='0'))
    op.add_column('hosts', sa.Column('peaks_marked', sa.Integer(), nullable=False, server_default='0'))
    op.add_column('runs', sa.Column('result_basis', JSON, nullable=True))
    op.add_column('runs', sa.Column('result_stale', sa.Boolean(), nullable=False, server_default=sa.false()))
    op.add_column('runs', sa.Column('headline', JSON, nullable=True))
    op.add_column('runs', sa.Column('verdict', sa.String(16), nullable=True))
    # A result stored before this revision keeps its figures; its headline and verdict are copied out for the
    # light lists, and it has no basis, so the background sweep recomputes it once (app.results.stored).
    op.execute("UPDATE runs SET headline = result->'headline', verdict = result->>'verdict' WHERE result IS NOT NULL")
    op.create_index('ix_runs_result_stale', 'runs', ['id'],
                    postgresql_where=sa.text('result IS NOT NULL AND (result_stale OR result_basis IS NULL)'))
    # History's label filters: `labels_snapshot @> {"region": "x"}` (GIN), and the runs not handed out yet, which
    # are matched on their host's current labels
    op.create_index('ix_runs_labels_snapshot', 'runs', ['labels_snapshot'], postgresql_using='gin',
                    postgresql_ops={'labels_snapshot': 'jsonb_path_ops'})
    op.create_index('ix_runs_unlabelled', 'runs', ['host_id'], postgresql_where=sa.text('labels_snapshot IS NULL'))


def downgrade() -> None:
    op.drop_index('ix_runs_unlabelled', table_name='runs')
    op.drop_index('ix_runs_labels_snapshot', table_name='runs')
    op.drop_index('ix_runs_result_stale', table_name='runs')
    op.drop_column('runs', 'verdict')
    op.drop_column('runs', 'headline')
    op.drop_column('runs', 'result_stale')
    op.drop_column('runs', 'result_basis')
    op.drop_column('hosts', 'peaks_marked')
    op.drop_column('hosts', 'peaks_version')
