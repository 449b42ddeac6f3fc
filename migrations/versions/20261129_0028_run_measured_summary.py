"""A run's measured summary stored on the run (issue 31): the count, min, max and sum of its measured (not warm-up)
samples, every attempt's, from the minute rollup, in four nullable columns of `runs` (app.jobs.models.Run.measured_*),
and the indexes a report over a period reads them by (app.jobs.samples.daily): per instance label, the label's runs
with a summary in created_at order; without a label, the runs with a summary in created_at order; each with the
summary included so that the index alone answers (an index-only scan), the label indexes with the label snapshot
too, without which PostgreSQL's planner does not read an expression's index alone.

Columns on the run rather than a table of their own: a report filters runs by their label snapshot and creation time,
both on the run, so the report is one range of one index of `runs` (a table keyed by run would be probed once per run,
25,000 probes for a quarter under a label at a million runs, the cost this replaces); the run is written once more
when it ends anyway, and four columns of 8 bytes, NULL (no bytes) until then, cost little.

Existing databases: every ended run's summary is made from the minute rollup (which outlives the samples, so runs
whose samples retention dropped get theirs too), a range of run ids at a time; runs not ended get theirs when they
end. The statement and the terminal statuses are app.jobs.samples.MEASURED_SUMMARY's and
hostbench_common.runstatus.TERMINAL's, written out here as a migration is: what they were then. The indexes are made
after the backfill (so the updates do not maintain them).

Revision ID: 0028
Revises: 0027
Create Date: 2026-11-29 13:10:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0028'
down_revision: str | None = '0027'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEYS = ('provider', 'instance_type', 'region')
COLUMNS = ('measured_n', 'measured_lo', 'measured_hi', 'measured_total')
BATCH = 50_000  # run ids a statement

BACKFILL = """
update runs set measured_n = s.n, measured_lo = s.lo, measured_hi = s.hi, measured_total = s.total
from (select m.run_id, sum(m.n) as n, min(m.lo) as lo, max(m.hi) as hi, sum(m.total) as total
      from sample_minutes m join sample_phases p on p.id = m.phase_id
      where m.run_id between :lo and :hi and not p.warmup group by m.run_id) s
where runs.id = s.run_id and runs.status in ('succeeded', 'failed', 'untrusted', 'cancelled')"""


def upgrade() -> None:
    op.add_column('runs', sa.Column('measured_n', sa.BigInteger(), nullable=True))
    for name in COLUMNS[1:]:
        op.add_column('runs', sa.Column(name, sa.Float(), nullable=True))
    bind = op.get_bind()
    first, last = bind.execute(sa.text('select min(id), max(id) from runs')).one()
    if first is not None:
        for lo in range(first, last + 1, BATCH):
            bind.execute(sa.text(BACKFILL), {'lo': lo, 'hi': lo + BATCH - 1})
    for key in KEYS:
        op.create_index(f'ix_runs_report_{key}', 'runs', [sa.text(f"(labels_snapshot ->> '{key}')"), 'created_at'],
                        postgresql_include=[*COLUMNS, 'labels_snapshot'],
                        postgresql_where=sa.text('measured_n IS NOT NULL'))
    op.create_index('ix_runs_report', 'runs', ['created_at'], postgresql_include=list(COLUMNS),
                    postgresql_where=sa.text('measured_n IS NOT NULL'))


def downgrade() -> None:
    op.drop_index('ix_runs_report', table_name='runs')
    for key in KEYS:
        op.drop_index(f'ix_runs_report_{key}', table_name='runs')
    for name in reversed(COLUMNS):
        op.drop_column('runs', name)
