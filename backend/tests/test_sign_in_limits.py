"""Sign-in limits (app/users/ratelimit.py): a stranger's guesses lock out only the stranger, concurrent guesses
never get more than the limit checked, and bad sign-in links block only the address that sent them."""
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

from app.core.config import get_settings
from app.main import app

PASSWORD = "correct horse battery"


@pytest.fixture
def person(session):
    from app.users import service as users

    users.create_user(session, "person", "operator", PASSWORD)
    return "person"


def _from(address: str) -> TestClient:
    return TestClient(app, client=(address, 40000))


def _login(c: TestClient, password: str, name: str = "person") -> int:
    return c.post("/api/auth/login", json={"name": name, "password": password}).status_code


def test_a_strangers_guesses_do_not_lock_the_owner_out(person):
    limit = get_settings().login_max_failures
    with _from("203.0.113.7") as stranger, _from("198.51.100.2") as owner:
        for _ in range(limit):
            assert _login(stranger, "nope nope!") == 401
        r = stranger.post("/api/auth/login", json={"name": person, "password": PASSWORD})
        assert r.status_code == 429 and int(r.headers["retry-after"]) > 0  # the stranger is stopped, even when right
        assert _login(owner, PASSWORD) == 200  # the owner, from their own address, is not


def test_one_address_trying_many_names_is_stopped_too(person):
    limit = get_settings().login_max_failures_per_address
    with _from("203.0.113.8") as stranger:
        for i in range(limit):
            assert _login(stranger, "nope nope!", name=f"name{i}") == 401
        assert _login(stranger, "nope nope!", name="another") == 429
    with _from("198.51.100.3") as owner:
        assert _login(owner, PASSWORD) == 200


def test_concurrent_guesses_get_at_most_the_limit_checked():
    """Each guess is counted before it is judged, in one Redis script: 40 at once, exactly `limit` get through
    (before: a check, the slow password hash, then the count; 11-16 of 16 concurrent guesses were judged)."""
    from app.core.errors import TooMany
    from app.users import ratelimit

    limit = get_settings().login_max_failures
    barrier = threading.Barrier(40)

    def guess(_: int) -> bool:
        barrier.wait()
        try:
            ratelimit.reserve("login", "203.0.113.9", "person")
        except TooMany:
            return False
        time.sleep(0.2)  # the password hash; the reservation is held, never given back for a wrong guess
        return True

    with ThreadPoolExecutor(40) as pool:
        judged = sum(pool.map(guess, range(40)))
    assert judged == limit


def test_a_block_lasts_longer_each_time_it_comes_back(person):
    from app.core.broker import get_redis
    from app.users import ratelimit

    window = get_settings().login_window_s
    with _from("203.0.113.10") as stranger:
        for _ in range(get_settings().login_max_failures):
            _login(stranger, "nope nope!")
        first = int(stranger.post("/api/auth/login", json={"name": person, "password": "x" * 10})
                    .headers["retry-after"])
        assert window - 5 <= first <= window
        pair = ratelimit._keys("login", "203.0.113.10", person)[0]
        get_redis().delete(pair)  # the first block is over
        for _ in range(get_settings().login_max_failures):
            _login(stranger, "nope nope!")
        second = int(stranger.post("/api/auth/login", json={"name": person, "password": "x" * 10})
                     .headers["retry-after"])
    assert 2 * window - 5 <= second <= 2 * window


def test_bad_sign_in_links_block_only_the_address_that_sent_them(session):
    from app.users import service as users

    user = users.create_user(session, "newcomer", "viewer", None)
    link = users.create_sign_in_link(session, user)
    limit = get_settings().login_max_failures
    with _from("203.0.113.11") as stranger, _from("198.51.100.4") as newcomer:
        for i in range(limit):
            assert stranger.post("/api/auth/link", json={"token": f"hblink_{'x' * 40}{i}"}).status_code == 401
        assert stranger.post("/api/auth/link", json={"token": f"hblink_{'y' * 41}"}).status_code == 429
        r = newcomer.post("/api/auth/link", json={"token": link.split("#")[-1]})
        assert r.status_code == 200, r.text
