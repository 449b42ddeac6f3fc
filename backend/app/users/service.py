"""People, their passwords, sessions, API tokens and one-time sign-in links."""
import functools
from datetime import timedelta

import redis
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.core.broker import get_redis
from app.core.config import get_settings
from app.core.db import utcnow
from app.core.errors import BadRequest, Conflict, NotFound, Unauthorized
from app.core.security import hash_token, new_token
from app.users.models import ROLES, ApiToken, SignInLink, User, UserSession

_hasher = PasswordHasher()  # argon2id with the library's (RFC 9106 low-memory) parameters


@functools.cache
def _dummy_hash() -> str:
    """Verified when the name is unknown, so a wrong name costs as long as a wrong password. Made on first use,
    once per process: not at import, where it was a seventh of the API's start-up CPU (issue 28)."""
    return _hasher.hash("hostbench: no such user")
LINK_PATH = "/signin/link#"


def role_at_least(role: str, needed: str) -> bool:
    return ROLES.index(role) >= ROLES.index(needed)


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def _verify(stored: str | None, password: str) -> bool:
    try:
        return _hasher.verify(stored or _dummy_hash(), password) and stored is not None
    except (VerificationError, InvalidHashError):
        return False


def get_user(session: Session, user_id: int) -> User:
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(f"user {user_id} not found")
    return user


def user_by_name(session: Session, name: str) -> User | None:
    return session.scalar(select(User).where(User.name == name))


def list_users(session: Session) -> list[User]:
    return list(session.scalars(select(User).order_by(User.id)))


def count_users(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(User)) or 0


def create_user(session: Session, name: str, role: str, password: str | None) -> User:
    if role not in ROLES:
        raise BadRequest(f"role must be one of {', '.join(ROLES)}")
    if user_by_name(session, name) is not None:
        raise Conflict(f"a user named {name!r} exists")
    user = User(name=name, role=role, password_hash=hash_password(password) if password else None)
    session.add(user)
    session.commit()
    return user


def authenticate_password(session: Session, name: str, password: str) -> User:
    user = user_by_name(session, name)
    ok = _verify(user.password_hash if user else None, password)
    if user is None or not ok or user.disabled_at is not None:
        raise Unauthorized("wrong name or password")
    if _hasher.check_needs_rehash(user.password_hash or ""):
        user.password_hash = hash_password(password)
        session.commit()
    return user


def set_password(session: Session, user: User, current: str | None, new: str) -> None:
    if user.password_hash is not None and (current is None or not _verify(user.password_hash, current)):
        raise Unauthorized("the current password is wrong")
    user.password_hash = hash_password(new)
    # Every other session of this person ends: a changed password should lock out whoever knew the old one.
    session.commit()


def last_admin(session: Session, user: User) -> bool:
    """Whether `user` is the only active admin. Locks every active admin's row until the caller's transaction ends
    (in id order, so two callers never deadlock): two admins demoting each other at once are judged one after the
    other, and the second sees the first's change, so the rule holds under concurrency."""
    admins = session.scalars(select(User.id).where(User.role == "admin", User.disabled_at.is_(None))
                             .order_by(User.id).with_for_update()).all()
    session.refresh(user)  # the row as the lock left it: another transaction may just have changed it
    if user.role != "admin" or user.disabled_at is not None:
        return False
    return not [i for i in admins if i != user.id]


CREDENTIALS_EPOCH = "hb:credentials:epoch"


def credentials_changed() -> None:
    """Tell open live streams that a token, session or account was revoked, disabled or deleted (committed now):
    each re-checks its own credential (app.live.router). Without Redis the streams check on their own."""
    try:
        get_redis().incr(CREDENTIALS_EPOCH)
    except redis.RedisError:
        pass


# -- sessions --------------------------------------------------------------------------------------------
def create_session(session: Session, user: User) -> tuple[str, UserSession]:
    token = new_token("hbses")
    s = UserSession(user_id=user.id, token_hash=hash_token(token), csrf_token=new_token("hbcsrf")[6:],
                    expires_at=utcnow() + timedelta(seconds=get_settings().session_ttl_s))
    session.add(s)
    session.commit()
    return token, s


def session_user(session: Session, token: str) -> tuple[User, UserSession] | None:
    row = session.execute(
        select(UserSession, User).join(User, User.id == UserSession.user_id)
        .where(UserSession.token_hash == hash_token(token))
    ).first()
    if row is None:
        return None
    us, user = row
    now = utcnow()
    idle = timedelta(seconds=get_settings().session_idle_s)
    if us.expires_at < now or us.last_seen_at + idle < now or user.disabled_at is not None:
        session.delete(us)
        session.commit()
        return None
    if (now - us.last_seen_at).total_seconds() > 60:  # at most one write a minute per session
        us.last_seen_at = now
        session.commit()
    return user, us


def end_session(session: Session, us: UserSession) -> None:
    session.execute(delete(UserSession).where(UserSession.id == us.id))
    session.commit()


def end_sessions(session: Session, user: User, keep: UserSession | None = None) -> None:
    q = delete(UserSession).where(UserSession.user_id == user.id)
    if keep is not None:
        q = q.where(UserSession.id != keep.id)
    session.execute(q)
    session.commit()


# -- personal API tokens ---------------------------------------------------------------------------------
def create_api_token(session: Session, user: User, name: str, expires_days: int | None) -> tuple[str, ApiToken]:
    token = new_token("hbpat")
    expires = utcnow() + timedelta(days=expires_days) if expires_days else None
    row = ApiToken(user_id=user.id, name=name, token_hash=hash_token(token), expires_at=expires)
    session.add(row)
    session.commit()
    return token, row


def api_token_user(session: Session, token: str) -> User | None:
    row = session.execute(
        select(ApiToken, User).join(User, User.id == ApiToken.user_id)
        .where(ApiToken.token_hash == hash_token(token))
    ).first()
    if row is None:
        return None
    t, user = row
    now = utcnow()
    if t.revoked_at is not None or (t.expires_at is not None and t.expires_at < now) or user.disabled_at:
        return None
    if t.last_used_at is None or (now - t.last_used_at).total_seconds() > 60:
        t.last_used_at = now
        session.commit()
    return user


def list_api_tokens(session: Session, user: User) -> list[ApiToken]:
    return list(session.scalars(select(ApiToken).where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
                                .order_by(ApiToken.id)))


def revoke_api_token(session: Session, user: User, token_id: int) -> ApiToken:
    t = session.get(ApiToken, token_id)
    if t is None or t.user_id != user.id or t.revoked_at is not None:
        raise NotFound(f"API token {token_id} not found")
    t.revoked_at = utcnow()
    session.commit()
    return t


# -- one-time sign-in links ------------------------------------------------------------------------------
def create_sign_in_link(session: Session, user: User) -> str:
    """A path (`/signin/link#hblink_…`): the token rides in the fragment, which browsers never send or log."""
    token = new_token("hblink")
    session.add(SignInLink(user_id=user.id, token_hash=hash_token(token),
                           expires_at=utcnow() + timedelta(seconds=get_settings().sign_in_link_ttl_s)))
    session.commit()
    return LINK_PATH + token


def use_sign_in_link(session: Session, token: str) -> User:
    link = session.scalar(select(SignInLink).where(SignInLink.token_hash == hash_token(token)).with_for_update())
    if link is None or link.used_at is not None or link.expires_at < utcnow():
        session.rollback()
        raise Unauthorized("this sign-in link is unknown, used or expired; ask an admin for a new one")
    user = get_user(session, link.user_id)
    if user.disabled_at is not None:
        session.rollback()
        raise Unauthorized("this account is disabled")
    link.used_at = utcnow()
    session.commit()
    return user


def bootstrap_admin(session: Session) -> str | None:
    """The first admin, when nobody exists yet: returns a one-time sign-in path, else None."""
    if count_users(session):
        return None
    user = create_user(session, "admin", "admin", None)
    return create_sign_in_link(session, user)
