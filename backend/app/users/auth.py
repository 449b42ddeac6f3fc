"""Who is calling, and may they: the people's side of app.core.auth. A person's role is declared on a route through
exactly one of `ViewerDep`, `OperatorDep`, `AdminDep`; app.core.routes reads it back (docs/security.md)."""
import asyncio
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Any

import redis
import redis.asyncio as aioredis
from fastapi import Depends, Request
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import Session

from app.core.auth import CSRF_HEADER, SESSION_COOKIE, UNSAFE, bearer, check_origin
from app.core.broker import REDIS_TIMEOUT_S, get_async_redis, get_redis
from app.core.config import get_settings
from app.core.db import get_session, utcnow
from app.core.errors import Forbidden, Unauthorized
from app.core.routes import ACCESS_ATTR
from app.core.security import hash_token, same
from app.users import service as users
from app.users.models import User, UserSession


@dataclass
class Principal:
    user: User
    session: UserSession | None  # None when the call came with a personal API token

    @property
    def name(self) -> str:
        return self.user.name

    @property
    def role(self) -> str:
        return self.user.role


class CredentialCache:
    """The people's credentials checked lately, per process, so a read does not look its credential up in
    PostgreSQL (issue 31): an entry serves a safe request (GET, HEAD) for at most TTL_S, and only while the
    credentials epoch in Redis (app.users.service.credentials_changed: every revocation, logout, password change,
    role change, disabling and deletion moves it) is the one read before the entry was looked up. So a revocation
    in any process ends every process's cached entries at once. Without Redis nothing is cached. A write (POST, PUT,
    PATCH, DELETE) always checks in PostgreSQL, and gets the person's rows in its own session."""

    TTL_S = 5.0
    MAX = 10_000  # entries; beyond it the cache starts again empty

    def __init__(self) -> None:
        self._entries: dict[str, tuple[float, str, User, UserSession | None]] = {}
        self._lock = threading.Lock()
        self._redis: redis.Redis | None = None
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aioredis.Redis] = \
            weakref.WeakKeyDictionary()
        self._epoch_reads: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task] = \
            weakref.WeakKeyDictionary()
        self.hits = 0

    def epoch(self) -> str | None:
        """The credentials epoch now; None (cache nothing) while Redis cannot say."""
        try:
            if self._redis is None:
                self._redis = get_redis()  # one client per process: its connection pool is shared by the threads
            return str(self._redis.get(users.CREDENTIALS_EPOCH) or 0)
        except redis.RedisError:
            return None

    async def epoch_async(self) -> str | None:
        """The same, from the event loop without blocking it (app.core.readcache): one client per loop, and one GET
        at a time, shared by the callers that ask while it is on its way (a burst of a thousand reads is one GET,
        not a thousand connections to Redis)."""
        loop = asyncio.get_running_loop()
        pending = self._epoch_reads.get(loop)
        if pending is None or pending.done():
            pending = self._epoch_reads[loop] = loop.create_task(self._read_epoch(loop))
        return await asyncio.shield(pending)

    async def _read_epoch(self, loop: asyncio.AbstractEventLoop) -> str | None:
        try:
            client = self._async.get(loop)
            if client is None:
                client = self._async[loop] = get_async_redis()
            async with asyncio.timeout(REDIS_TIMEOUT_S):
                return str(await client.get(users.CREDENTIALS_EPOCH) or 0)
        except (redis.RedisError, OSError, TimeoutError):
            return None

    def get(self, key: str, epoch: str | None) -> tuple[User, UserSession | None] | None:
        if epoch is None:
            return None
        with self._lock:
            entry = self._entries.get(key)
        if entry is None or entry[1] != epoch or time.monotonic() - entry[0] > self.TTL_S:
            return None
        _, _, user, us = entry
        now = utcnow()
        if us is not None and (us.expires_at < now or us.last_seen_at + timedelta(
                seconds=get_settings().session_idle_s) < now):
            return None  # expired meanwhile: PostgreSQL says so (and ends it)
        self.hits += 1
        return user, us

    def put(self, key: str, epoch: str | None, user: User, us: UserSession | None) -> None:
        if epoch is None:
            return
        # copies of their columns, in no session: the rows loaded by this request's session would be expired by
        # its rollback and then detached, and a later hit reading `.role` from them failed (DetachedInstanceError,
        # a 500 seen in the CI run of 2026-11-29)
        entry = (time.monotonic(), epoch, _copy(user), _copy(us) if us is not None else None)
        with self._lock:
            if len(self._entries) >= self.MAX:
                self._entries.clear()
            self._entries[key] = entry

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def _copy(row: Any) -> Any:
    """A transient copy of a row's columns (never expired, never bound to a session)."""
    cls = type(row)
    return cls(**{a.key: getattr(row, a.key) for a in sa_inspect(cls).column_attrs})


CREDENTIALS = CredentialCache()


def authenticate(request: Request, session: Session) -> Principal:
    safe = request.method not in UNSAFE
    token = bearer(request)
    if token is not None:
        if not token.startswith("hbpat_"):
            raise Unauthorized("this route takes a personal API token (hbpat_…) or a signed-in session")
        key = hash_token(token)
        epoch = CREDENTIALS.epoch() if safe else None  # read before the look-up: a revocation after it moves it
        if (hit := CREDENTIALS.get(key, epoch)) is not None:
            return Principal(hit[0], None)
        user = users.api_token_user(session, token)
        if user is None:
            raise Unauthorized("API token unknown, expired or revoked")
        CREDENTIALS.put(key, epoch, user, None)
        return Principal(user, None)
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        key = hash_token(cookie)
        epoch = CREDENTIALS.epoch() if safe else None
        if (hit := CREDENTIALS.get(key, epoch)) is not None:
            return Principal(hit[0], hit[1])
        found = users.session_user(session, cookie)
        if found is not None:
            user, us = found
            CREDENTIALS.put(key, epoch, user, us)
            if request.method in UNSAFE:
                sent = request.headers.get(CSRF_HEADER, "")
                if not sent or not same(sent, us.csrf_token):
                    raise Forbidden(f"missing or wrong {CSRF_HEADER} header (CSRF protection); reload the page")
            return Principal(user, us)
    raise Unauthorized("sign in first")


def _require(role: str) -> Callable[..., Principal]:
    def dep(request: Request, session: Annotated[Session, Depends(get_session)]) -> Principal:
        if request.method in UNSAFE or request.url.path.endswith("/events"):
            check_origin(request)
        p = authenticate(request, session)
        # End the read transaction the look-up opened (objects stay loaded: expire_on_commit=False). Left open,
        # a live stream held it "idle in transaction" for its whole life: a pooled connection per stream, and
        # locks that made a TRUNCATE (and would make a migration) wait behind every open stream.
        session.commit()
        if not users.role_at_least(p.role, role):
            raise Forbidden(f"this needs the {role} role; {p.name} is {p.role}")
        return p

    dep.__name__ = f"require_{role}"
    setattr(dep, ACCESS_ATTR, role)
    return dep


require_viewer = _require("viewer")
require_operator = _require("operator")
require_admin = _require("admin")
ViewerDep = Annotated[Principal, Depends(require_viewer)]
OperatorDep = Annotated[Principal, Depends(require_operator)]
AdminDep = Annotated[Principal, Depends(require_admin)]
