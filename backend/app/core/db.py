from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import lru_cache

from sqlalchemy import JSON, DateTime, MetaData, create_engine
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Engine
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

from app.core.config import get_settings
from app.core.errors import TooMany

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {datetime: DateTime(timezone=True)}


# JSON columns: JSONB on PostgreSQL (every domain's models use it)
JSONType = JSON().with_variant(JSONB(), "postgresql")


def utcnow() -> datetime:
    return datetime.now(UTC)


# Two connection pools, so that no amount of dashboard traffic can take the connections the runners' control
# calls (claim, lease, heartbeat, samples, finish) need: a lost lease fails a benchmark, a slow page does not.
# A request waits at most POOL_TIMEOUT_S for a connection, then gets 503 with Retry-After (PoolBusy), far below
# the runner's 30-s lease and 10-s request timeout (docs/architecture.md, "Concurrency").
POOL_TIMEOUT_S = get_settings().hostbench_db_pool_timeout_s
POOL_SIZE = get_settings().hostbench_db_pool_size
RUNNER_POOL_SIZE = get_settings().hostbench_db_runner_pool_size


class PoolBusy(TooMany):
    """Every connection of a pool is in use and none came back within POOL_TIMEOUT_S: 503 + Retry-After."""

    status_code = 503

    def __init__(self, which: str):
        super().__init__(f"the server is busy ({which} database connections all in use); retry shortly",
                         retry_after_s=1)


def _engine(size: int, name: str) -> Engine:
    return create_engine(get_settings().database_url, pool_pre_ping=True, pool_size=size, max_overflow=size // 2,
                         pool_timeout=POOL_TIMEOUT_S, pool_use_lifo=True,
                         # a hung PostgreSQL accepts the TCP connection and then says nothing: give up
                         connect_args={"application_name": f"hostbench-{name}", "connect_timeout": 3})


@lru_cache
def get_engine() -> Engine:
    return _engine(POOL_SIZE, "api")


@lru_cache
def get_runner_engine() -> Engine:
    return _engine(RUNNER_POOL_SIZE, "runner-api")


@lru_cache
def get_sessionmaker() -> sessionmaker[Session]:
    return sessionmaker(get_engine(), expire_on_commit=False)


@lru_cache
def get_runner_sessionmaker() -> sessionmaker[Session]:
    return sessionmaker(get_runner_engine(), expire_on_commit=False)


@contextmanager
def busy_as_503(which: str) -> Iterator[None]:
    """A pool checkout that timed out becomes PoolBusy (503 + Retry-After) instead of a 500."""
    try:
        yield
    except PoolTimeout as exc:
        raise PoolBusy(which) from exc


def get_session() -> Iterator[Session]:
    with busy_as_503("dashboard"), get_sessionmaker()() as session:
        yield session


def get_runner_session() -> Iterator[Session]:
    with busy_as_503("runner"), get_runner_sessionmaker()() as session:
        yield session


# the same outside a route's dependencies (a handler's worker-thread step)
runner_session = contextmanager(get_runner_session)
