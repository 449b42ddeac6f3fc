"""Whether a run's current attempt has delivered every sample it will send (`runs.samples_closed`), so that a live
stream's `end` is sent only once no sample of the attempt can still come (app.live.router).

A run the server ends (its lease ran out, a cancel, a partner's end) may still have samples on its host: the runner
spooled them while it could not reach the server and uploads them when it can, after the end. The runner says it is
done with an attempt by its finish, or, where the server decided the end and no finish is sent, by
`POST /api/runner/runs/{id}/closed` once its spool is empty (docs/reliability.md, "The end of a live stream").

Existing databases: the column is added with a default of true, which PostgreSQL stores once in the catalogue (no
table rewrite at a million runs), so every run that exists is taken as closed, as the streams took it before; the
default then becomes false for the runs made from now on. A new attempt sets it to false when it is claimed.

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-29 19:20:00.000000
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0029'
down_revision: str | None = '0028'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('runs', sa.Column('samples_closed', sa.Boolean(), nullable=False, server_default=sa.true()))
    op.alter_column('runs', 'samples_closed', server_default=sa.false())


def downgrade() -> None:
    op.drop_column('runs', 'samples_closed')
