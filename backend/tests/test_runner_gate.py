"""Issue 27: the runner's credential before its body (item 12), bodies read before a slot with a deadline and a
per-address bound (item 1, the parts in one process; the real processes: test_slow_bodies.py), and no lease run
out for renewals the server itself refused (item 5; end to end: `./hostbench chaos --scenario postgres-stop`)."""
import asyncio
import json
import re
from datetime import timedelta

import pytest
from sqlalchemy import update

from app.core import body as body_mod
from app.core.db import utcnow
from app.jobs import dispatch
from app.jobs.models import Run, ServerMark
from app.main import app
from tests.test_runner_flow import KERNEL_INFO, _claim, _job

RUNNER_POSTS = sorted(p for p, ops in app.openapi()["paths"].items() if p.startswith("/api/runner/") and "post" in ops)


def test_every_runner_route_is_in_the_list():
    assert len(RUNNER_POSTS) >= 7, RUNNER_POSTS


@pytest.mark.parametrize("path", RUNNER_POSTS)
@pytest.mark.parametrize("payload", ["{not json", '{"attempt": "x"}', "[]"])
def test_a_persons_credential_on_a_runner_route_is_401_whatever_the_body(client, path, payload):
    """The client signs with an admin's personal token: 401 as the route table says, never 422 for the body."""
    url = path.replace("{run_id}", "1")
    r = client.post(url, content=payload, headers={"Content-Type": "application/json"})
    assert r.status_code == 401, (url, r.status_code, r.text)
    assert r.headers["WWW-Authenticate"] == "Bearer"
    r = client.post(url, content=payload, headers={"Content-Type": "application/json", "Authorization": ""})
    assert r.status_code == 401, (url, r.status_code, r.text)
    fake = {"Content-Type": "application/json", "Authorization": "Bearer hbrun_" + "x" * 43}
    r = client.post(url, content=payload, headers=fake)
    assert r.status_code == 401, (url, r.status_code, r.text)


def test_the_runners_own_credential_still_gets_its_body_judged(client, runner):
    _, headers = runner
    r = client.post("/api/runner/runs/1/lease", content="{not json",
                    headers={**headers, "Content-Type": "application/json"})
    assert r.status_code == 422, r.text
    assert client.post("/api/runner/heartbeat", json={"version": "0.1.0"}, headers=headers).status_code == 200


async def _call(mw, scope: dict, receive) -> list[dict]:
    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    await mw(scope, receive, send)
    return sent


def _scope(address: str = "192.0.2.7", path: str = "/api/auth/login") -> dict:
    return {"type": "http", "method": "POST", "path": path, "query_string": b"", "client": (address, 5000),
            "headers": [(b"content-type", b"application/json"), (b"content-length", b"100")]}


async def _never() -> dict:
    await asyncio.sleep(3600)
    return {}


def test_a_body_that_never_comes_is_cut_off_and_the_app_never_sees_it(monkeypatch):
    monkeypatch.setattr(body_mod, "BODY_GRACE_S", 0.2)
    seen = []

    async def app_(scope, receive, send):
        seen.append(scope["path"])

    sent = asyncio.run(asyncio.wait_for(_call(body_mod.BodyLimits(app_), _scope(), _never), 5))
    assert sent[0]["status"] == 408 and not seen
    assert (b"connection", b"close") in sent[0]["headers"]
    assert "too slow" in json.loads(sent[1]["body"])["detail"]
    assert not body_mod.READING


def test_a_body_slower_than_the_minimum_rate_is_cut_off(monkeypatch):
    monkeypatch.setattr(body_mod, "BODY_GRACE_S", 0.3)
    monkeypatch.setattr(body_mod, "BODY_MIN_RATE", 100)  # bytes per second

    async def trickle() -> dict:  # one byte every 0.1 s: 10 B/s, far under the minimum
        await asyncio.sleep(0.1)
        return {"type": "http.request", "body": b" ", "more_body": True}

    async def app_(scope, receive, send):
        raise AssertionError("the application got a body that was too slow")

    sent = asyncio.run(asyncio.wait_for(_call(body_mod.BodyLimits(app_), _scope(), trickle), 10))
    assert sent[0]["status"] == 408


def test_bodies_from_one_address_are_bounded_and_a_vouched_runner_is_not_counted(monkeypatch):
    monkeypatch.setattr(body_mod, "BODIES_PER_ADDRESS", 3)

    async def app_(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def scenario() -> tuple[list[dict], list[dict], list[dict]]:
        mw = body_mod.BodyLimits(app_)
        held = [asyncio.ensure_future(_call(mw, _scope(), _never)) for _ in range(3)]
        await asyncio.sleep(0.05)
        full = await _call(mw, _scope(), _never)  # the fourth from that address: 429 at once

        async def whole() -> dict:
            return {"type": "http.request", "body": b"{}", "more_body": False}

        other = await _call(mw, _scope("198.51.100.9"), whole)  # another address is not held up
        vouched = await _call(mw, {**_scope(path="/api/runner/runs/1/lease"), body_mod.VOUCHED: 1}, whole)
        for t in held:
            t.cancel()
        await asyncio.gather(*held, return_exceptions=True)
        return full, other, vouched

    full, other, vouched = asyncio.run(scenario())
    assert full[0]["status"] == 429 and (b"retry-after", b"1") in full[0]["headers"]
    assert other[0]["status"] == 200 and vouched[0]["status"] == 200
    assert not body_mod.READING


def _running(client, session, runner) -> int:
    host_id, headers = runner
    run_id = _job(client, host_id)
    _claim(client, session, host_id, headers)
    client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": KERNEL_INFO}, headers=headers)
    dispatch.reconcile(session)  # the reconciler is watching (no gap)
    return run_id


def test_a_renewal_the_server_refused_does_not_count_against_the_runner(client, session, runner, monkeypatch):
    """The server answers the runner's renewal 503 (here: PostgreSQL hung as the watcher sees it); when it takes
    calls again the lease has run out, yet the run is not failed: its lease is extended past the refusal, and the
    runner's next renewal lands. A lease that then runs out with the server taking calls fails the run as before."""
    from app.core import admission

    _, headers = runner
    run_id = _running(client, session, runner)
    monkeypatch.setattr(admission, "database_hung", lambda: True)
    r = client.post(f"/api/runner/runs/{run_id}/lease", json={"attempt": 1}, headers=headers)
    assert r.status_code == 503, r.text
    monkeypatch.undo()
    run = session.get(Run, run_id)
    run.lease_expires_at = utcnow() - timedelta(seconds=5)  # the outage outlasted the lease
    session.commit()
    result = dispatch.reconcile(session)
    assert result["failed"] == 0 and result["renewed"] == 1, result
    session.expire_all()
    run = session.get(Run, run_id)
    assert run.status == "running" and run.lease_expires_at > utcnow()
    assert client.post(f"/api/runner/runs/{run_id}/lease", json={"attempt": 1}, headers=headers).status_code == 200
    # the refusal long past: silence is the runner's again
    from app.core.broker import SENDER, get_redis
    from app.jobs import refusals

    refusals.flush(session)
    SENDER.flush(2.0)
    get_redis().set(refusals.KEY, repr(utcnow().timestamp() - 3600))
    session.execute(update(ServerMark).values(at=utcnow() - timedelta(hours=1)).where(ServerMark.name == refusals.MARK))
    run.lease_expires_at = utcnow() - timedelta(seconds=1)
    session.commit()
    assert dispatch.reconcile(session)["failed"] == 1


def test_the_refusal_is_kept_in_the_database_when_redis_has_lost_it(client, session, runner, monkeypatch):
    from app.core import admission
    from app.core.broker import SENDER, get_redis
    from app.jobs import refusals

    _, headers = runner
    run_id = _running(client, session, runner)
    monkeypatch.setattr(admission, "database_hung", lambda: True)
    assert client.post(f"/api/runner/runs/{run_id}/lease", json={"attempt": 1}, headers=headers).status_code == 503
    monkeypatch.undo()
    refusals.flush(session)  # the API's mark loop
    SENDER.flush(2.0)
    get_redis().delete(refusals.KEY)  # Redis restarted without it
    run = session.get(Run, run_id)
    run.lease_expires_at = utcnow() - timedelta(seconds=5)
    session.commit()
    assert dispatch.reconcile(session)["failed"] == 0
    session.expire_all()
    assert session.get(Run, run_id).status == "running"


PERSON_BODIES = sorted((m.upper(), p) for p, ops in app.openapi()["paths"].items() for m in ("post", "put", "patch")
                       if m in ops and "requestBody" in ops[m] and not p.startswith(("/api/runner/", "/api/auth/",
                                                                                       "/api/runners/")))


def test_a_malformed_body_is_judged_only_after_the_callers_access(client, session):
    """FastAPI parses JSON before the route's dependencies: no credential got 422 on every route with a body."""
    from fastapi.testclient import TestClient

    from app.users.service import create_api_token, create_user

    assert len(PERSON_BODIES) >= 10
    viewer = create_user(session, "gate-viewer", "viewer", password="viewer password 1")
    viewer_token = create_api_token(session, viewer, "t", None)[0]
    bad = {"Content-Type": "application/json"}
    anonymous = TestClient(app)
    for method, path in PERSON_BODIES:
        url = re.sub(r"\{[^}]+\}", "1", path)
        r = anonymous.request(method, url, content="{not json", headers=bad)
        assert r.status_code == 401, (method, path, r.status_code, r.text)
        r = client.request(method, url, content="{not json", headers=bad)  # an admin: the body is judged
        assert r.status_code == 422 and r.json()["detail"][0]["type"] == "json_invalid", (method, path, r.text)
    # a viewer on an operator's route: 403, not 422
    r = anonymous.post("/api/jobs", content="{not json", headers={**bad, "Authorization": f"Bearer {viewer_token}"})
    assert r.status_code == 403, r.text


def test_a_credential_looked_up_without_a_free_slot_is_passed_on_unmarked(client, runner, monkeypatch):
    """Made-up credentials wait for the runners' few look-up slots; when none is free the call goes on unmarked,
    and the route itself answers: a real runner is served, a made-up credential still gets 401."""
    from contextlib import asynccontextmanager

    from app.core.admission import Busy
    from app.runner_api import gate

    @asynccontextmanager
    async def busy(name):
        raise Busy(name)
        yield

    gate.forget()
    monkeypatch.setattr(gate, "slot", busy)
    _, headers = runner
    assert client.post("/api/runner/heartbeat", json={"version": "0.1.0"}, headers=headers).status_code == 200
    fake = {"Authorization": "Bearer hbrun_" + "y" * 43}
    assert client.post("/api/runner/heartbeat", json={"version": "0.1.0"}, headers=fake).status_code == 401


def test_a_connection_that_does_not_finish_its_headers_is_closed(tmp_path):
    """A real API process (uvicorn with app.core.server's protocol): a connection that sends nothing, one that
    sends part of a request's headers, and a kept-alive one that sends part of its second request's headers are
    all closed within the header deadline; before, uvicorn kept each for ever."""
    import os
    import socket
    import time
    from urllib.parse import urlsplit

    from app.core.bounds import HEADER_DEADLINE_S
    from tests.apiproc import api_process

    with api_process(tmp_path / "api.log", dict(os.environ, PYTHONUNBUFFERED="1")) as base:
        u = urlsplit(base)
        addr = (u.hostname, u.port)
        silent = socket.create_connection(addr)
        partial = socket.create_connection(addr)
        partial.sendall(b"POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: applic")
        kept = socket.create_connection(addr)
        kept.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        kept.settimeout(5)
        assert kept.recv(4096).startswith(b"HTTP/1.1 200")
        kept.sendall(b"GET /api/health HTTP/1.1\r\nHost: 1")
        t0 = time.monotonic()
        for s in (silent, partial, kept):
            s.settimeout(HEADER_DEADLINE_S + 5)
            while s.recv(4096):  # whatever comes, then the close (b"")
                pass
            s.close()
        waited = time.monotonic() - t0
        assert waited < HEADER_DEADLINE_S + 3, waited
        import httpx

        assert httpx.get(f"{base}/api/health", timeout=5).status_code == 200  # the server serves on


def test_a_call_waiting_for_a_connection_is_answered_as_soon_as_postgresql_is_seen_gone(monkeypatch):
    """A renewal that arrives as PostgreSQL goes down waits for a pool connection; once the watcher sees the
    database gone it is answered 503 "database" at once, not after the pool's whole timeout (2 s), which was past
    the runner's fence (chaos postgres-stop: "lease lost: server unreachable for 2 s")."""
    import os
    import time

    from psycopg_pool import AsyncConnectionPool

    from app.core.dbwatch import DB_WATCH, DbState, DbWatch, _libpq_url
    from app.core.errors import Unavailable
    from app.runner_api import fast

    monkeypatch.setattr(DbWatch, "running", property(lambda self: True))

    async def scenario() -> float:
        pool = AsyncConnectionPool(_libpq_url(os.environ["DATABASE_URL"]), min_size=1, max_size=1, open=False,
                                   kwargs={"autocommit": True})
        await pool.open(wait=True)

        async def the_pool() -> AsyncConnectionPool:
            return pool

        monkeypatch.setattr(fast, "_pool", the_pool)
        held = await pool.getconn()  # every connection in use: the call waits for one

        async def gone() -> None:
            await asyncio.sleep(0.1)
            # what the watcher says once its probe fails (its own thread, if running here, is not asked)
            monkeypatch.setattr(DB_WATCH, "state", lambda: DbState(False, "unreachable: OperationalError", 0.1))

        task = asyncio.ensure_future(gone())
        t0 = time.monotonic()
        try:
            with pytest.raises(Unavailable) as refused:
                async with fast._connection():
                    pass
            assert refused.value.what == "database"
            return time.monotonic() - t0
        finally:
            await task
            await pool.putconn(held)
            await pool.close()

    took = asyncio.run(scenario())
    assert took < 0.8, took


@pytest.mark.parametrize(("method", "path"), [("TRACE", "/api/runner/work"), ("GET", "/api/runner/runs/1/lease"),
                                              ("DELETE", "/api/runner/heartbeat")])
def test_a_method_no_runner_route_takes_is_405_not_401(client, method, path):
    """The gate checks a credential only for a call some runner route takes: any other method is the router's
    405 (schemathesis: TRACE /api/runner/work answered 401 where the document lists no TRACE)."""
    r = client.request(method, path, headers={"Authorization": "Bearer hbrun_" + "x" * 43})
    assert r.status_code == 405, (method, path, r.status_code, r.text)
