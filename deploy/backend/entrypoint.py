#!/opt/venv/bin/python
"""Entrypoint of the backend containers: builds DATABASE_URL and REDIS_URL from HOSTBENCH_DB_PASSWORD when they
are not given (the password percent-encoded, so any character works), waits until PostgreSQL and Redis accept
it, and (unless HOSTBENCH_WAIT_SCHEMA=0, as in the migrate job) until the migrate job has brought the schema to
the newest Alembic revision; then it runs the command. So the containers may start in any order: the compose
file needs no dependency on the one-shot migrate job, which podman 4.3 (Debian 12) cannot start containers
after, and podman-compose ignores health conditions on podman < 4.6."""
import os
import sys
import time
from urllib.parse import quote

WAIT_S = float(os.environ.get("HOSTBENCH_WAIT_S", "180"))


def urls() -> None:
    password = os.environ.get("HOSTBENCH_DB_PASSWORD", "")
    if not os.environ.get("DATABASE_URL") or not os.environ.get("REDIS_URL"):
        if not password:
            sys.exit("hostbench: set HOSTBENCH_DB_PASSWORD (or DATABASE_URL and REDIS_URL)")
    pw = quote(password, safe="")
    os.environ.setdefault("DATABASE_URL", f"postgresql+psycopg://hostbench:{pw}@postgres:5432/hostbench")
    os.environ.setdefault("REDIS_URL", f"redis://:{pw}@redis:6379/0")


def wait(what: str, check) -> None:
    deadline, last = time.monotonic() + WAIT_S, None
    while True:
        try:
            check()
            return
        except Exception as exc:  # noqa: BLE001 - any failure means: not ready yet
            if str(exc) != last:
                print(f"hostbench: waiting for {what}: {type(exc).__name__}: {str(exc).strip()[:200]}", flush=True)
                last = str(exc)
            if time.monotonic() > deadline:
                sys.exit(f"hostbench: {what} not ready after {WAIT_S:.0f} s")
            time.sleep(1)


def check_db() -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(os.environ["DATABASE_URL"], pool_pre_ping=False)
    try:
        with engine.connect() as c:
            c.execute(text("select 1"))
    finally:
        engine.dispose()


def check_redis() -> None:
    import redis

    redis.Redis.from_url(os.environ["REDIS_URL"], socket_connect_timeout=3).ping()


def check_schema() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from sqlalchemy import create_engine, text

    heads = set(ScriptDirectory.from_config(Config("/app/migrations/alembic.ini")).get_heads())
    engine = create_engine(os.environ["DATABASE_URL"])
    try:
        with engine.connect() as c:
            have = {r[0] for r in c.execute(text("select version_num from alembic_version"))}
    finally:
        engine.dispose()
    if have != heads:
        raise RuntimeError(f"schema at {sorted(have) or 'nothing'}, waiting for {sorted(heads)} (the migrate job)")


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: hostbench-entrypoint COMMAND [ARG...]")
    urls()
    if os.environ.get("HOSTBENCH_WAIT", "1") != "0":
        wait("PostgreSQL", check_db)
        wait("Redis", check_redis)
        if os.environ.get("HOSTBENCH_WAIT_SCHEMA", "1") != "0":
            wait("the schema", check_schema)
    os.execvp(sys.argv[1], sys.argv[1:])


if __name__ == "__main__":
    main()
