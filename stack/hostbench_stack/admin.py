"""How every command that needs the database finds it, with no environment variable to set:

1. DATABASE_URL / REDIS_URL from the environment (an external PostgreSQL / Redis);
2. else the ones a running `./hostbench up` recorded in `.hostbench/services.json` (0600);
3. else the embedded PostgreSQL and Redis in `.hostbench/`, started for the length of the command (with the
   migrations applied first) and stopped after it.

`up` holds an exclusive lock on `.hostbench/up.lock` for its whole life, and so does a command while it runs
the embedded servers itself: the lock, not the pid in the file, says whether an `up` is live, and two
processes never start PostgreSQL on the same data directory."""
import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from hostbench_stack import STATE, settings
from hostbench_stack.private import private_dir, write_private
from hostbench_stack.stack import Stack

SERVICES = "services.json"
LOCK = "up.lock"


class Busy(RuntimeError):
    pass


@contextlib.contextmanager
def state_lock(state: Path = STATE, *, wait_s: float = 0) -> Iterator[IO[str]]:
    """The exclusive lock on `<state>/up.lock`; raises Busy when it stays held for `wait_s`."""
    private_dir(state)
    f = os.fdopen(os.open(state / LOCK, os.O_RDWR | os.O_CREAT, 0o600), "r+")
    deadline = time.monotonic() + wait_s
    try:
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise Busy(f"{state / LOCK} is held by another ./hostbench") from None
                time.sleep(0.2)
        yield f
    finally:
        f.close()


def record(state: Path, **services: object) -> None:
    """Written by `up` once everything is up: the live URLs (with their passwords, hence 0600)."""
    private_dir(state)
    write_private(state / SERVICES, json.dumps({**services, "pid": os.getpid()}, indent=2) + "\n")


def forget(state: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (state / SERVICES).unlink()


def _recorded(state: Path) -> dict | None:
    try:
        data = json.loads((state / SERVICES).read_text())
        os.kill(int(data["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return data


def live_up(state: Path = STATE) -> dict | None:
    """The services a running `up` recorded, or None when no `up` holds the lock."""
    data = _recorded(state)
    if data is None or not (state / LOCK).exists():
        return None
    with open(state / LOCK) as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return data  # held, and the file names a live process: that `up` is running
        fcntl.flock(f, fcntl.LOCK_UN)
    return None  # nobody holds it: the file is left from an `up` that was killed


def default_public_url() -> str:
    env = settings.load()
    if env.public_url:
        return env.public_url
    host = "127.0.0.1" if env.bind in ("0.0.0.0", "::") else env.bind  # noqa: S104
    return f"http://{host}:{env.port}"


@contextlib.contextmanager
def database(state: Path = STATE, *, wait_s: float = 180) -> Iterator["Stack"]:
    """A Stack whose env() reaches the database and Redis (found as the module says); nothing but the
    embedded servers is started, and those are stopped on exit."""
    env = settings.load()
    env_db, env_redis = env.database_url or "", env.redis_url or ""
    public = {"HOSTBENCH_PUBLIC_URL": default_public_url()}
    if env_db and env_redis:
        yield Stack(state, database_url=env_db, redis_url=env_redis, extra_env=public)
        return
    deadline = time.monotonic() + wait_s
    while True:
        up = live_up(state)
        if up is not None:
            public = {"HOSTBENCH_PUBLIC_URL": up.get("public_url") or public["HOSTBENCH_PUBLIC_URL"]}
            yield Stack(state, database_url=env_db or up["database_url"], redis_url=env_redis or up["redis_url"],
                        extra_env=public)
            return
        try:
            lock = state_lock(state)
            lock.__enter__()
        except Busy:
            # an `up` that is still starting, or another command using the embedded servers: wait for it
            if time.monotonic() > deadline:
                raise RuntimeError(f"another ./hostbench holds {state / LOCK} (an `up` still starting, or a "
                                   f"command); try again, or set DATABASE_URL and REDIS_URL") from None
            time.sleep(0.3)
            continue
        break
    stack = Stack(state, database_url=env_db or None, redis_url=env_redis or None, extra_env=public)
    try:
        stack.start_services()
        if stack.pg is not None:
            stack.migrate()
        yield stack
    finally:
        stack.stop()
        lock.__exit__(None, None, None)
