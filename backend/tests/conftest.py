"""Real PostgreSQL (built by the real migrations) and real Redis. `./hostbench test` passes an embedded
server; run alone, this starts its own embedded ones."""
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_started: list = []


# Under pytest-xdist (`./hostbench test` runs this suite in two worker processes, a module to a worker), each worker
# has a database of its own on the test PostgreSQL and a Redis server of its own: every test empties both when it
# ends (clean_db), and Redis's pub/sub channels (live samples, doorbells) are shared by all of a server's databases.
# The workers inherit the environment of the controlling process, which has run this file too: what that process
# set up for itself (its database, HOSTBENCH_TEST_OWN_DB, and Redis) a worker replaces with its own.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")


def _bootstrap() -> None:
    from hostbench_stack.services import EmbeddedPostgres, EmbeddedRedis

    tmp = Path(tempfile.mkdtemp(prefix="hb-backend-tests-"))
    db = f"hostbench_test_{WORKER}" if WORKER else "hostbench_test"
    if WORKER:
        given = os.environ.pop("DATABASE_URL", None)
        if given and given != os.environ.get("HOSTBENCH_TEST_OWN_DB") and "HOSTBENCH_TEST_PG_SERVER" not in os.environ:
            # a database given by hand: this worker's own beside it, on the same server
            os.environ["HOSTBENCH_TEST_PG_SERVER"] = given.rsplit("/", 1)[0] + "/postgres"
        os.environ.pop("REDIS_URL", None)  # the pub/sub channels: a Redis server of this worker's own
    if "DATABASE_URL" not in os.environ:
        server = os.environ.get("HOSTBENCH_TEST_PG_SERVER")
        if server is None:
            pg = EmbeddedPostgres(tmp / "pg", tmp / "pg.log", durable=False)
            pg.start()
            _started.append(pg)
            server = pg.url("postgres")
            os.environ["HOSTBENCH_TEST_PG_SERVER"] = server  # the workers' databases go on it too
        import psycopg

        dsn = server.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'drop database if exists "{db}" with (force)')
            conn.execute(f'create database "{db}"')
        os.environ["DATABASE_URL"] = os.environ["HOSTBENCH_TEST_OWN_DB"] = server.rsplit("/", 1)[0] + f"/{db}"
    if "REDIS_URL" not in os.environ:
        r = EmbeddedRedis(tmp / "redis", tmp / "redis.log", durable=False)
        os.environ["REDIS_URL"] = r.start()
        _started.append(r)
    subprocess.run([sys.executable, "-m", "alembic", "-c", str(ROOT / "migrations" / "alembic.ini"), "upgrade", "head"],
                   cwd=ROOT / "backend", check=True, capture_output=True)


_bootstrap()
# Tests drive the reconciler by hand (dispatch.reconcile) and assert what one pass did: no API process of this test
# session runs it in the background (app.reconciler.reconcile_loop).
os.environ.setdefault("API_RECONCILE", "false")
# The dashboard is shed when this process's event loop runs 0.25 s late (out of CPU). A test machine running
# suites side by side gets there without any stampede; tests shed only when they mean to (test_admission).
os.environ.setdefault("HOSTBENCH_DASHBOARD_SHED_LAG_S", "2.0")
# TestClient calls come with Host: testserver; the allowed-hosts check must let that name in.
os.environ.setdefault("HOSTBENCH_ALLOWED_HOSTS", "testserver")
# Reads are not answered from the read cache (app.core.readcache) unless a test means it (test_read_cache): many tests
# write to PostgreSQL directly, not through the API, and read the change back at once.
os.environ.setdefault("HOSTBENCH_READ_CACHE_S", "0")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    for svc in reversed(_started):
        svc.stop()


@pytest.fixture(autouse=True)
def clean_db() -> Iterator[None]:
    yield
    from sqlalchemy import text

    from app.core.broker import get_redis
    from app.core.db import get_engine

    with get_engine().begin() as conn:
        # a transaction some process left open fails the test here, loudly, instead of hanging the suite
        conn.execute(text("set local lock_timeout = '20s'"))
        conn.execute(text("truncate samples, runs, jobs, hosts, registration_tokens, users, user_sessions, api_tokens, "
                          "sign_in_links, audit_events, meshes, bands restart identity cascade"))
        # an API process a test started marks "api" every period; left behind, it would read as "every API is
        # down" to the next test's reconciler pass (dispatch.renew_after_gap)
        conn.execute(text("delete from server_marks where name in ('api', 'refused')"))
    get_redis().flushdb()
    from app.users.auth import CREDENTIALS

    CREDENTIALS.clear()  # the credentials epoch went with Redis's keys


@pytest.fixture
def session():
    from app.core.db import get_sessionmaker

    with get_sessionmaker()() as s:
        yield s


@pytest.fixture
def anon_client():
    """A client with no credential at all."""
    from fastapi.testclient import TestClient

    from app.main import app

    with TestClient(app) as c:
        yield c


def wait_until(predicate, timeout: float, what: str):
    """What `predicate` returns once it is truthy (polled every 0.3 s), for the tests that watch a whole stack."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.3)
    raise AssertionError(f"{what}: not within {timeout} s")


def fresh_db(name: str) -> str:
    """A new, empty database `name` on the test PostgreSQL (dropped first if a run left one): its URL. For the tests
    that start a whole stack of their own beside the session's database."""
    import psycopg

    url = os.environ["DATABASE_URL"]
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as conn:
        conn.execute(f'drop database if exists "{name}" with (force)')
        conn.execute(f'create database "{name}"')
    return url.rsplit("/", 1)[0] + f"/{name}"


def make_user(session, name: str, role: str) -> dict[str, str]:
    """A real user with a real personal API token; returns its Authorization header."""
    from app.users import service as users

    user = users.create_user(session, name, role, None)
    token, _ = users.create_api_token(session, user, "tests", None)
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def admin_headers(session) -> dict[str, str]:
    return make_user(session, "test-admin", "admin")


@pytest.fixture
def client(admin_headers):
    """A client signed in as an admin (a personal API token): the tests of features, not of access."""
    from fastapi.testclient import TestClient

    from app.main import app

    with TestClient(app, headers=admin_headers) as c:
        yield c


@pytest.fixture
def runner(client, session):
    """A registered runner: (host_id, auth headers)."""
    from app.hosts.service import create_registration_token

    token, _ = create_registration_token(session)
    r = client.post("/api/runners/register", json={
        "registration_token": token, "name": "test-host", "hostname": "test.local", "version": "0",
        "inventory": ZEN4_INVENTORY, "labels": {"provider": "test"},
    })
    assert r.status_code == 201, r.text
    body = r.json()
    return body["host_id"], {"Authorization": f"Bearer {body['runner_token']}"}


ZEN4_INVENTORY = {
    "cpu": {"model": "AMD EPYC 9R14", "vendor": "AuthenticAMD", "family": 0x19, "model_number": 0x11,
            "sockets": 1, "cores_per_socket": 2, "threads_per_core": 1, "isa": ["sse2", "avx2", "fma", "avx512f"],
            "best_isa": "avx512", "max_mhz": None},
    "memory": {"total_bytes": 24 * 2**30},
}
