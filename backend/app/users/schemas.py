from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from app.core.bounds import JSON_NUMBER

Role = Literal["viewer", "operator", "admin"]
UserName = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
Password = Field(min_length=10, max_length=256)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Login(_Strict):
    name: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=256)


class LinkSignIn(_Strict):
    token: str = Field(min_length=8, max_length=200)


class PasswordChange(_Strict):
    current_password: str | None = Field(None, max_length=256)
    new_password: str = Password


class Me(BaseModel):
    id: int
    name: str
    role: Role
    has_password: bool


class UserPublic(BaseModel):
    id: int
    name: str
    role: Role
    created_at: datetime
    disabled: bool
    has_password: bool


class UsersPublic(BaseModel):
    data: list[UserPublic]
    count: int


class UserCreate(_Strict):
    name: str = UserName
    role: Role
    password: str | None = Field(None, min_length=10, max_length=256,
                                 description="none: the answer carries a one-time sign-in link to hand over")


class UserCreated(BaseModel):
    user: UserPublic
    sign_in_link: str | None


class UserUpdate(_Strict):
    role: Role | None = None
    disabled: StrictBool | None = None


class SignInLinkPublic(BaseModel):
    sign_in_link: str


class ApiTokenCreate(_Strict):
    name: str = Field(min_length=1, max_length=64)
    expires_days: Annotated[int, Field(ge=1, le=3650), JSON_NUMBER] | None = None


class ApiTokenPublic(BaseModel):
    id: int
    name: str
    created_at: datetime
    last_used_at: datetime | None
    expires_at: datetime | None


class ApiTokenCreated(ApiTokenPublic):
    token: str = Field(description="shown once; only its hash is stored")


class ApiTokensPublic(BaseModel):
    data: list[ApiTokenPublic]
    count: int
