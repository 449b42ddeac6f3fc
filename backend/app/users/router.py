from fastapi import APIRouter, Request, Response

from app.audit.service import record
from app.core.auth import CSRF_COOKIE, PUBLIC, SESSION_COOKIE, check_origin
from app.core.bounds import Id
from app.core.config import get_settings
from app.core.db import utcnow
from app.core.deps import SessionDep
from app.core.errors import Conflict, Unauthorized
from app.users import ratelimit
from app.users import service as users
from app.users.auth import AdminDep, ViewerDep
from app.users.models import ApiToken, User, UserSession
from app.users.schemas import (
    ApiTokenCreate,
    ApiTokenCreated,
    ApiTokenPublic,
    ApiTokensPublic,
    LinkSignIn,
    Login,
    Me,
    PasswordChange,
    SignInLinkPublic,
    UserCreate,
    UserCreated,
    UserPublic,
    UsersPublic,
    UserUpdate,
)

router = APIRouter(prefix="/api", tags=["auth"])


def me(user: User) -> Me:
    return Me(id=user.id, name=user.name, role=user.role, has_password=user.password_hash is not None)  # type: ignore[arg-type]


def user_public(user: User) -> UserPublic:
    return UserPublic(id=user.id, name=user.name, role=user.role, created_at=user.created_at,  # type: ignore[arg-type]
                      disabled=user.disabled_at is not None, has_password=user.password_hash is not None)


def token_public(t: ApiToken) -> ApiTokenPublic:
    return ApiTokenPublic(id=t.id, name=t.name, created_at=t.created_at, last_used_at=t.last_used_at,
                          expires_at=t.expires_at)


def _set_cookies(request: Request, response: Response, token: str, us: UserSession) -> None:
    secure = request.url.scheme == "https"
    max_age = int(get_settings().session_ttl_s)
    response.set_cookie(SESSION_COOKIE, token, max_age=max_age, httponly=True, samesite="lax", secure=secure,
                        path="/")
    # Readable by the page, which echoes it in X-CSRF-Token; another site can neither read nor send it.
    response.set_cookie(CSRF_COOKIE, us.csrf_token, max_age=max_age, httponly=False, samesite="strict",
                        secure=secure, path="/")


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


@router.post("/auth/login", response_model=Me, dependencies=[PUBLIC])
def login(body: Login, request: Request, response: Response, session: SessionDep) -> Me:
    check_origin(request)  # no signing a victim's browser into the attacker's account from another site
    address = _client(request)
    ratelimit.reserve("login", address, body.name)  # counted before the check: concurrent guesses cannot pass it
    try:
        user = users.authenticate_password(session, body.name, body.password)
    except Unauthorized:
        raise
    except Exception:
        ratelimit.release("login", address, body.name)  # not a guess judged wrong (e.g. the database is down)
        raise
    ratelimit.release("login", address, body.name)
    token, us = users.create_session(session, user)
    _set_cookies(request, response, token, us)
    return me(user)


@router.post("/auth/link", response_model=Me, dependencies=[PUBLIC])
def sign_in_with_link(body: LinkSignIn, request: Request, response: Response, session: SessionDep) -> Me:
    """Trade a one-time sign-in link for a session; the page then asks the person for a password."""
    check_origin(request)
    address = _client(request)
    ratelimit.reserve("link", address, "")  # per address only: one stranger's bad tokens block no one else
    try:
        user = users.use_sign_in_link(session, body.token)
    except Unauthorized:
        raise
    except Exception:
        ratelimit.release("link", address, "")
        raise
    ratelimit.release("link", address, "")
    token, us = users.create_session(session, user)
    _set_cookies(request, response, token, us)
    return me(user)


@router.get("/auth/me", response_model=Me)
def read_me(p: ViewerDep) -> Me:
    return me(p.user)


@router.post("/auth/logout", status_code=204)
def logout(p: ViewerDep, response: Response, session: SessionDep) -> Response:
    if p.session is not None:
        users.end_session(session, p.session)
        users.credentials_changed()
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/")
    response.delete_cookie(CSRF_COOKIE, path="/")
    return response


@router.put("/auth/password", status_code=204)
def change_password(body: PasswordChange, p: ViewerDep, session: SessionDep) -> Response:
    users.set_password(session, p.user, body.current_password, body.new_password)
    users.end_sessions(session, p.user, keep=p.session)
    record(session, p.name, "password.change", f"user {p.name}")
    session.commit()
    users.credentials_changed()
    return Response(status_code=204)


# -- personal API tokens ---------------------------------------------------------------------------------
@router.get("/me/tokens", response_model=ApiTokensPublic)
def read_tokens(p: ViewerDep, session: SessionDep) -> ApiTokensPublic:
    rows = users.list_api_tokens(session, p.user)
    return ApiTokensPublic(data=[token_public(t) for t in rows], count=len(rows))


@router.post("/me/tokens", response_model=ApiTokenCreated, status_code=201)
def create_token(body: ApiTokenCreate, p: ViewerDep, session: SessionDep) -> ApiTokenCreated:
    token, row = users.create_api_token(session, p.user, body.name, body.expires_days)
    record(session, p.name, "api_token.create", f"token {row.id} of {p.name}", name=body.name)
    session.commit()
    return ApiTokenCreated(**token_public(row).model_dump(), token=token)


@router.delete("/me/tokens/{token_id}", status_code=204)
def revoke_token(token_id: Id, p: ViewerDep, session: SessionDep) -> Response:
    row = users.revoke_api_token(session, p.user, token_id)
    record(session, p.name, "api_token.revoke", f"token {row.id} of {p.name}", name=row.name)
    session.commit()
    users.credentials_changed()  # a live stream opened with the token ends within seconds
    return Response(status_code=204)


# -- users (admin) ---------------------------------------------------------------------------------------
@router.get("/users", response_model=UsersPublic)
def read_users(_: AdminDep, session: SessionDep) -> UsersPublic:
    rows = users.list_users(session)
    return UsersPublic(data=[user_public(u) for u in rows], count=len(rows))


@router.post("/users", response_model=UserCreated, status_code=201)
def create_user(body: UserCreate, p: AdminDep, session: SessionDep) -> UserCreated:
    user = users.create_user(session, body.name, body.role, body.password)
    link = None if body.password else users.create_sign_in_link(session, user)
    record(session, p.name, "user.create", f"user {user.name}", role=user.role)
    session.commit()
    return UserCreated(user=user_public(user), sign_in_link=link)


@router.patch("/users/{user_id}", response_model=UserPublic)
def update_user(user_id: Id, body: UserUpdate, p: AdminDep, session: SessionDep) -> UserPublic:
    user = users.get_user(session, user_id)
    demoted = body.role is not None and body.role != "admin"
    if (demoted or body.disabled) and users.last_admin(session, user):
        raise Conflict(f"{user.name} is the last active admin; make another admin first")
    changes = body.model_dump(exclude_none=True)
    if body.role is not None:
        user.role = body.role
    if body.disabled is not None:
        user.disabled_at = (user.disabled_at or utcnow()) if body.disabled else None
    if body.disabled or demoted:
        users.end_sessions(session, user)
    record(session, p.name, "user.update", f"user {user.name}", **changes)
    session.commit()  # also ends the lock last_admin() took
    users.credentials_changed()
    return user_public(user)


@router.delete("/users/{user_id}", status_code=204)
def delete_user(user_id: Id, p: AdminDep, session: SessionDep) -> Response:
    user = users.get_user(session, user_id)
    if users.last_admin(session, user):
        raise Conflict(f"{user.name} is the last active admin; make another admin first")
    record(session, p.name, "user.delete", f"user {user.name}")
    session.delete(user)
    session.commit()
    users.credentials_changed()
    return Response(status_code=204)


@router.post("/users/{user_id}/sign-in-link", response_model=SignInLinkPublic)
def new_sign_in_link(user_id: Id, p: AdminDep, session: SessionDep) -> SignInLinkPublic:
    user = users.get_user(session, user_id)
    link = users.create_sign_in_link(session, user)
    record(session, p.name, "user.sign_in_link", f"user {user.name}")
    session.commit()
    return SignInLinkPublic(sign_in_link=link)
