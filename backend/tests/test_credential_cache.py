"""The read credential cache (app.users.auth.CredentialCache) keeps copies of the person's rows: the rows the
looking-up request loaded are expired by that request's rollback and detached when its session closes, and a later
hit that read `.role` from them failed with DetachedInstanceError (a 500 on GET /api/hosts in a CI run)."""
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.db import get_engine
from app.users import service as users
from app.users.auth import CredentialCache
from app.users.models import User


def test_a_cached_person_outlives_the_session_that_looked_it_up(session):
    users.create_user(session, "cache-reader", "viewer", None)
    session.commit()
    cache = CredentialCache()
    with Session(get_engine()) as other:  # the request that looked the credential up
        user = other.scalars(select(User).where(User.name == "cache-reader")).one()
        cache.put("key", "7", user, None)
        other.rollback()  # as a handler's rollback does: every row it loaded is expired
    hit = cache.get("key", "7")
    assert hit is not None
    person, _ = hit
    assert (person.name, person.role) == ("cache-reader", "viewer")  # read after that session closed
