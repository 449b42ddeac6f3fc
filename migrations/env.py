from alembic import context
from sqlalchemy import create_engine

import app.hosts.models  # noqa: F401 - register tables
import app.jobs.models  # noqa: F401
import app.users.models  # noqa: F401
import app.audit.models  # noqa: F401
import app.trends.models  # noqa: F401
import app.reference.models  # noqa: F401
import app.suites.models  # noqa: F401
import app.schedules.models  # noqa: F401
import app.jobs.mesh_models  # noqa: F401
import app.bands.models  # noqa: F401
import app.checks.models  # noqa: F401
from app.core.config import get_settings
from app.core.db import Base

target_metadata = Base.metadata


def run_migrations_offline() -> None:
    context.configure(url=get_settings().database_url, target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = create_engine(get_settings().database_url)
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=target_metadata, compare_type=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
