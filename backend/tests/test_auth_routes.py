"""Who may call what: the route table walked from the OpenAPI document, so that a new route cannot slip
through without declaring its access; CSRF, origin and host checks; sign-in, links, tokens, roles."""
import re
import shlex
import time

import pytest

from app.core.auth import CSRF_COOKIE, SESSION_COOKIE
from tests.conftest import make_user

PUBLIC = {("GET", "/api/health"), ("POST", "/api/auth/login"), ("POST", "/api/auth/link"),
          ("GET", "/api/install/runner.sh"), ("GET", "/api/install/hostbench-runner.tar.gz")}
RANK = {"viewer": 0, "operator": 1, "admin": 2}


def _operations(client) -> list[tuple[str, str, str]]:
    doc = client.get("/openapi.json").json()
    ops = []
    for path, item in doc["paths"].items():
        for method, op in item.items():
            ops.append((method.upper(), path, op.get("x-hostbench-access")))
    return ops


def _call(client, method: str, path: str, headers: dict | None = None):
    url = re.sub(r"\{[^}]+\}", "1", path)
    kw = {"json": {}} if method in ("POST", "PUT", "PATCH") else {}
    return client.request(method, url, headers=headers or {}, **kw)


def test_every_route_declares_who_may_call_it(anon_client):
    ops = _operations(anon_client)
    assert len(ops) > 30
    undeclared = [(m, p) for m, p, a in ops if a is None]
    assert not undeclared, f"routes without a declared access: {undeclared}"
    public = {(m, p) for m, p, a in ops if a == "public"}
    assert public <= PUBLIC, f"unexpected public routes: {public - PUBLIC}"


def test_every_non_public_route_refuses_a_caller_without_credentials(anon_client):
    checked = 0
    for method, path, access in _operations(anon_client):
        if access == "public":
            continue
        if access == "registration-token":  # the credential is in the body: a well-formed but unknown one
            r = anon_client.post(path, json={"registration_token": "hbreg_" + "x" * 43, "name": "n", "hostname": "h"})
        else:
            r = _call(anon_client, method, path)
        assert r.status_code == 401, f"{method} {path} ({access}) answered {r.status_code} without a credential"
        checked += 1
    assert checked > 30


@pytest.mark.parametrize("role", ["viewer", "operator"])
def test_routes_above_a_role_answer_403_to_it(anon_client, session, role):
    headers = make_user(session, f"a-{role}", role)
    refused = 0
    for method, path, access in _operations(anon_client):
        if access not in RANK or RANK[access] <= RANK[role]:
            continue
        r = _call(anon_client, method, path, headers)
        assert r.status_code == 403, f"{method} {path} needs {access}; a {role} got {r.status_code}"
        refused += 1
    assert refused >= (4 if role == "operator" else 10)


def test_a_runner_credential_is_no_key_to_the_dashboard_and_a_personal_token_none_to_runner_routes(
        anon_client, runner, admin_headers):
    _, runner_headers = runner
    assert anon_client.get("/api/hosts", headers=runner_headers).status_code == 401
    r = anon_client.post("/api/runner/heartbeat", json={}, headers=admin_headers)
    assert r.status_code == 401


def _sign_in(client, session, name="person", role="operator", password="correct horse battery"):
    from app.users import service as users

    users.create_user(session, name, role, password)
    r = client.post("/api/auth/login", json={"name": name, "password": password})
    assert r.status_code == 200, r.text
    assert r.json()["role"] == role
    return r


def test_sign_in_sets_an_httponly_session_cookie_and_a_readable_csrf_cookie(anon_client, session):
    r = _sign_in(anon_client, session)
    cookies = r.headers.get_list("set-cookie")
    session_cookie = next(c for c in cookies if c.startswith(SESSION_COOKIE + "="))
    csrf_cookie = next(c for c in cookies if c.startswith(CSRF_COOKIE + "="))
    assert "HttpOnly" in session_cookie and "samesite=lax" in session_cookie.lower()
    assert "HttpOnly" not in csrf_cookie and "samesite=strict" in csrf_cookie.lower()
    assert anon_client.get("/api/auth/me").json()["name"] == "person"


def test_wrong_password_and_unknown_name_get_the_same_401(anon_client, session):
    _sign_in(anon_client, session)
    anon_client.cookies.clear()
    a = anon_client.post("/api/auth/login", json={"name": "person", "password": "wrong password!"})
    b = anon_client.post("/api/auth/login", json={"name": "nobody", "password": "wrong password!"})
    assert a.status_code == b.status_code == 401
    assert a.json() == b.json() == {"detail": "wrong name or password"}


def test_sign_in_is_rate_limited_with_retry_after(anon_client, session):
    _sign_in(anon_client, session)
    anon_client.cookies.clear()
    for _ in range(10):
        assert anon_client.post("/api/auth/login", json={"name": "person", "password": "nope nope!"}).status_code == 401
    r = anon_client.post("/api/auth/login", json={"name": "person", "password": "correct horse battery"})
    assert r.status_code == 429
    assert int(r.headers["retry-after"]) > 0


def test_state_changes_with_the_cookie_need_the_csrf_header(anon_client, session, runner):
    host_id, _ = runner
    _sign_in(anon_client, session)
    csrf = anon_client.cookies.get(CSRF_COOKIE)
    patch = {"provider": "lab"}
    assert anon_client.patch(f"/api/hosts/{host_id}/labels", json=patch).status_code == 403
    r = anon_client.patch(f"/api/hosts/{host_id}/labels", json=patch, headers={"X-CSRF-Token": "x" * 40})
    assert r.status_code == 403
    r = anon_client.patch(f"/api/hosts/{host_id}/labels", json=patch, headers={"X-CSRF-Token": csrf})
    assert r.status_code == 200, r.text
    assert r.json()["labels"]["provider"] == "lab"


def _job(client, host_id: int, headers: dict) -> int:
    r = client.post("/api/jobs", headers=headers, json={
        "host_ids": [host_id], "experiment": "cpu",
        "params": {"op": "fp64", "threads": [1], "repeats": 1, "duration_s": 1, "warmup_s": 0.2}})
    assert r.status_code == 201, r.text
    assert r.json()["created_by"] == "test-admin"
    return r.json()["runs"][0]["id"]


def test_a_cross_site_form_post_cannot_cancel_a_run(anon_client, session, runner, admin_headers):
    host_id, _ = runner
    run_id = _job(anon_client, host_id, admin_headers)
    _sign_in(anon_client, session)
    # What another site's <form method=post> sends: the cookie rides along, no CSRF header, a foreign Origin.
    r = anon_client.post(f"/api/runs/{run_id}/cancel", data={"x": "1"},
                         headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403
    # A cross-origin fetch that copied a CSRF value is refused on its Origin alone.
    csrf = anon_client.cookies.get(CSRF_COOKIE)
    r = anon_client.post(f"/api/runs/{run_id}/cancel", headers={"Origin": "https://evil.example", "X-CSRF-Token": csrf})
    assert r.status_code == 403
    assert anon_client.get(f"/api/runs/{run_id}").json()["status"] != "cancelled"
    # Deleting a host and creating a job are refused the same way.
    for method, path, kw in (("DELETE", f"/api/hosts/{host_id}", {}), ("POST", "/api/jobs", {"json": {}})):
        r = anon_client.request(method, path, headers={"Origin": "https://evil.example"}, **kw)
        assert r.status_code == 403, (method, path, r.status_code)
    # The same cancel from the dashboard's own origin goes through, and says who did it.
    r = anon_client.post(f"/api/runs/{run_id}/cancel", headers={"Origin": "http://testserver", "X-CSRF-Token": csrf})
    assert r.status_code == 202, r.text
    assert r.json()["cancelled_by"] == "person"
    audit = anon_client.get("/api/audit").json()["data"]
    assert [(e["user_name"], e["action"]) for e in audit[:2]] == [("person", "run.cancel"), ("test-admin", "job.create")]


def test_the_live_stream_needs_a_session_and_refuses_foreign_origins(anon_client, session, runner, admin_headers):
    host_id, _ = runner
    run_id = _job(anon_client, host_id, admin_headers)
    assert anon_client.get(f"/api/runs/{run_id}/events").status_code == 401
    r = anon_client.get(f"/api/runs/{run_id}/events", headers={**admin_headers, "Origin": "https://evil.example"})
    assert r.status_code == 403


def test_a_host_header_that_is_no_ip_and_not_allowed_gets_400(anon_client):
    assert anon_client.get("/api/health", headers={"Host": "attacker.example"}).status_code == 400
    assert anon_client.get("/api/health", headers={"Host": "attacker.example:8000"}).status_code == 400
    assert anon_client.get("/api/health", headers={"Host": "10.1.2.3:8000"}).status_code == 200
    assert anon_client.get("/api/health", headers={"Host": "[::1]:8000"}).status_code == 200
    assert anon_client.get("/api/health", headers={"Host": "localhost:8000"}).status_code == 200


def test_a_sign_in_link_works_once_then_the_person_sets_a_password(anon_client, session):
    from app.users import service as users

    link = users.bootstrap_admin(session)
    assert link is not None and link.startswith("/signin/link#hblink_")
    assert users.bootstrap_admin(session) is None  # only when nobody exists
    token = link.split("#", 1)[1]
    r = anon_client.post("/api/auth/link", json={"token": token})
    assert r.status_code == 200 and r.json() == {"id": 1, "name": "admin", "role": "admin", "has_password": False}
    csrf = anon_client.cookies.get(CSRF_COOKIE)
    r = anon_client.put("/api/auth/password", json={"current_password": None, "new_password": "a long new password"},
                        headers={"X-CSRF-Token": csrf})
    assert r.status_code == 204, r.text
    anon_client.cookies.clear()
    assert anon_client.post("/api/auth/link", json={"token": token}).status_code == 401
    assert anon_client.post("/api/auth/login", json={"name": "admin", "password": "a long new password"}).status_code == 200


def test_sign_out_ends_the_session(anon_client, session):
    _sign_in(anon_client, session)
    csrf = anon_client.cookies.get(CSRF_COOKIE)
    old = anon_client.cookies.get(SESSION_COOKIE)
    assert anon_client.post("/api/auth/logout", headers={"X-CSRF-Token": csrf}).status_code == 204
    anon_client.cookies.set(SESSION_COOKIE, old)  # a copied cookie is worth nothing after sign-out
    assert anon_client.get("/api/auth/me").status_code == 401


def test_a_personal_api_token_is_shown_once_and_revocable(anon_client, admin_headers):
    r = anon_client.post("/api/me/tokens", json={"name": "ci", "expires_days": 30}, headers=admin_headers)
    assert r.status_code == 201
    created = r.json()
    token = {"Authorization": f"Bearer {created['token']}"}
    assert anon_client.get("/api/auth/me", headers=token).json()["name"] == "test-admin"
    listed = anon_client.get("/api/me/tokens", headers=admin_headers).json()["data"]
    assert all("token" not in t for t in listed) and created["id"] in [t["id"] for t in listed]
    assert anon_client.delete(f"/api/me/tokens/{created['id']}", headers=admin_headers).status_code == 204
    assert anon_client.get("/api/auth/me", headers=token).status_code == 401


def test_a_read_s_credential_is_checked_without_postgresql_and_a_revocation_elsewhere_ends_it_at_once(
        anon_client, session, admin_headers, monkeypatch):
    """Issue 31: a personal token's second read within the cache's life is not looked up in PostgreSQL; a write
    always is; a revocation by another process (the row changed, the credentials epoch in Redis moved) is seen by
    the very next read."""
    from datetime import UTC, datetime

    from sqlalchemy import text

    from app.users import service as users

    created = anon_client.post("/api/me/tokens", json={"name": "ci"}, headers=admin_headers).json()
    token = {"Authorization": f"Bearer {created['token']}"}
    looked_up = []
    real = users.api_token_user
    monkeypatch.setattr(users, "api_token_user", lambda s, t: looked_up.append(t) or real(s, t))
    assert anon_client.get("/api/auth/me", headers=token).status_code == 200
    assert anon_client.get("/api/runs", headers=token).status_code == 200
    assert anon_client.get("/api/auth/me", headers=token).json()["name"] == "test-admin"
    assert len(looked_up) == 1  # the first read only
    anon_client.post("/api/hosts/registration-tokens", json={}, headers=token)
    assert len(looked_up) == 2  # a write checks in PostgreSQL
    # another API process revokes it: its row, then the epoch (users.credentials_changed)
    session.execute(text("update api_tokens set revoked_at = :now where id = :id"),
                    {"now": datetime.now(UTC), "id": created["id"]})
    session.commit()
    users.credentials_changed()
    assert anon_client.get("/api/auth/me", headers=token).status_code == 401


def test_a_disabled_user_is_signed_out_and_the_last_admin_cannot_be_removed(anon_client, session, admin_headers):
    viewer = make_user(session, "v", "viewer")
    vid = anon_client.get("/api/auth/me", headers=viewer).json()["id"]
    assert anon_client.patch(f"/api/users/{vid}", json={"disabled": True}, headers=admin_headers).status_code == 200
    assert anon_client.get("/api/auth/me", headers=viewer).status_code == 401
    me = anon_client.get("/api/auth/me", headers=admin_headers).json()["id"]
    assert anon_client.delete(f"/api/users/{me}", headers=admin_headers).status_code == 409
    assert anon_client.patch(f"/api/users/{me}", json={"role": "viewer"}, headers=admin_headers).status_code == 409


def test_users_created_by_an_admin_get_a_one_time_link_when_no_password_is_given(anon_client, admin_headers):
    r = anon_client.post("/api/users", json={"name": "newcomer", "role": "viewer"}, headers=admin_headers)
    assert r.status_code == 201 and r.json()["sign_in_link"].startswith("/signin/link#")
    r = anon_client.post("/api/users", json={"name": "newcomer", "role": "viewer"}, headers=admin_headers)
    assert r.status_code == 409
    r = anon_client.post("/api/users", json={"name": "bad name!", "role": "root"}, headers=admin_headers)
    assert r.status_code == 422


# -- runners: registration tokens, revocation, rotation, deletion -----------------------------------------
def _register(client, token: str, name: str):
    return client.post("/api/runners/register", json={
        "registration_token": token, "name": name, "hostname": f"{name}.local", "version": "0.1.0"})


def test_add_host_hands_runners_the_address_of_their_own_api_process(anon_client, admin_headers, monkeypatch):
    """The install command names where runners send their control traffic: the public address by default,
    its host on HOSTBENCH_RUNNER_PORT (./hostbench up: the control process), or HOSTBENCH_RUNNER_URL whole."""
    from app.core.config import get_settings

    def server(host: str = "testserver") -> str:
        get_settings.cache_clear()
        r = anon_client.post("/api/hosts/registration-tokens", json={"ttl_s": 600},
                             headers={**admin_headers, "Host": host})
        assert r.status_code == 201, r.text
        words = shlex.split(r.json()["install_command"])
        return words[words.index("--server") + 1]

    try:
        monkeypatch.delenv("HOSTBENCH_PUBLIC_URL", raising=False)
        monkeypatch.delenv("HOSTBENCH_RUNNER_URL", raising=False)
        monkeypatch.delenv("HOSTBENCH_RUNNER_PORT", raising=False)
        assert server() == "http://testserver"
        monkeypatch.setenv("HOSTBENCH_RUNNER_PORT", "8123")
        assert server() == "http://testserver:8123"
        assert server("[::1]:8000") == "http://[::1]:8123"
        monkeypatch.setenv("HOSTBENCH_RUNNER_URL", "https://runners.example:9443/")
        assert server() == "https://runners.example:9443"
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()


def test_a_registration_token_registers_one_runner_only(anon_client, admin_headers):
    r = anon_client.post("/api/hosts/registration-tokens", json={"ttl_s": 600}, headers=admin_headers)
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["token"] in body["install_command"] and "/api/install/runner.sh" in body["install_command"]
    assert _register(anon_client, body["token"], "one").status_code == 201
    again = _register(anon_client, body["token"], "two")
    assert again.status_code == 401 and "already used" in again.json()["detail"]


def test_an_expired_registration_token_and_a_taken_name_are_refused(anon_client, session):
    from app.hosts.service import create_registration_token

    expired, _ = create_registration_token(session, ttl_s=0.01)
    time.sleep(0.05)
    assert _register(anon_client, expired, "late").status_code == 401
    t1, _ = create_registration_token(session)
    t2, _ = create_registration_token(session)
    assert _register(anon_client, t1, "twin").status_code == 201
    r = _register(anon_client, t2, "twin")
    assert r.status_code == 409 and "twin" in r.json()["detail"]


def test_a_revoked_runner_gets_401_and_its_running_run_fails_with_the_reason(anon_client, session, runner,
                                                                             admin_headers):
    from app.jobs import dispatch

    host_id, rh = runner
    run_id = _job(anon_client, host_id, admin_headers)
    dispatch.dispatch_host(session, host_id)
    r = anon_client.get("/api/runner/work", params={"wait_s": 0}, headers=rh)
    assert r.status_code == 200, r.text
    attempt = r.json()["attempt"]
    assert anon_client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": attempt, "kernel_info": {}},
                            headers=rh).status_code == 200
    r = anon_client.post(f"/api/hosts/{host_id}/revoke", headers=admin_headers)
    assert r.status_code == 200 and r.json()["revoked"] is True
    assert anon_client.post("/api/runner/heartbeat", json={}, headers=rh).status_code == 401
    run = anon_client.get(f"/api/runs/{run_id}", headers=admin_headers).json()
    assert run["status"] == "failed" and "revoked by test-admin" in run["status_reason"]
    r = anon_client.post("/api/jobs", headers=admin_headers, json={
        "host_ids": [host_id], "experiment": "cpu", "params": {"op": "fp64", "threads": [1]}})
    assert r.status_code == 422


def test_credential_rotation_keeps_the_old_credential_until_the_new_one_is_used(anon_client, runner, admin_headers):
    host_id, old = runner
    assert anon_client.post("/api/runner/heartbeat", json={}, headers=old).json()["rotate_credential"] is False
    r = anon_client.post(f"/api/hosts/{host_id}/rotate-credential", headers=admin_headers)
    assert r.status_code == 202 and r.json()["credential_rotation_pending"] is True
    assert anon_client.post("/api/runner/heartbeat", json={}, headers=old).json()["rotate_credential"] is True
    new = anon_client.post("/api/runner/credential/rotate", headers=old).json()["runner_token"]
    new_h = {"Authorization": f"Bearer {new}"}
    assert anon_client.post("/api/runner/heartbeat", json={}, headers=old).status_code == 200  # not yet retired
    ack = anon_client.post("/api/runner/heartbeat", json={}, headers=new_h)
    assert ack.status_code == 200 and ack.json()["rotate_credential"] is False
    assert anon_client.post("/api/runner/heartbeat", json={}, headers=old).status_code == 401


@pytest.mark.parametrize("history", ["keep", "delete"])
def test_deleting_a_host_with_or_without_its_history(anon_client, runner, admin_headers, history):
    host_id, rh = runner
    run_id = _job(anon_client, host_id, admin_headers)
    r = anon_client.delete(f"/api/hosts/{host_id}", params={"history": history}, headers=admin_headers)
    assert r.status_code == 204
    assert anon_client.post("/api/runner/heartbeat", json={}, headers=rh).status_code == 401
    assert anon_client.get("/api/hosts", headers=admin_headers).json()["count"] == 0
    assert anon_client.get(f"/api/hosts/{host_id}", headers=admin_headers).status_code == 404
    run = anon_client.get(f"/api/runs/{run_id}", headers=admin_headers)
    if history == "keep":
        assert run.status_code == 200 and run.json()["status"] == "failed"
    else:
        assert run.status_code == 404


def test_the_route_table_in_docs_is_the_applications():
    from pathlib import Path

    from app.cli import route_table

    doc = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text()
    table = doc.split("<!-- routes:begin -->\n", 1)[1].split("<!-- routes:end -->", 1)[0].strip()
    assert table == route_table(), "regenerate it: ./hostbench routes (docs/security.md, between the markers)"


def test_a_long_poll_begun_with_the_old_credential_survives_rotation_but_not_revocation(anon_client, runner,
                                                                                       admin_headers):
    import asyncio

    from app.core.errors import Unauthorized
    from app.runner_api import fast
    from app.runner_api.router import claim_once

    def _claim_once(host_id: int, address: str):  # one pass of the poll, on an event loop of its own
        async def once():
            try:
                return await claim_once(host_id, address)
            finally:
                await fast.close()
        return asyncio.run(once())

    host_id, old = runner
    anon_client.post(f"/api/hosts/{host_id}/rotate-credential", headers=admin_headers)
    new = anon_client.post("/api/runner/credential/rotate", headers=old).json()["runner_token"]
    assert anon_client.post("/api/runner/heartbeat", json={}, headers={"Authorization": f"Bearer {new}"}).status_code == 200
    assert _claim_once(host_id, "127.0.0.1") is None  # the poll's next pass: no work, and no 401
    anon_client.post(f"/api/hosts/{host_id}/revoke", headers=admin_headers)
    with pytest.raises(Unauthorized):
        _claim_once(host_id, "127.0.0.1")
