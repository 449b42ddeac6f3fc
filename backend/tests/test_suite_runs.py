"""Suite runs (app.suites): a built-in suite started on hosts makes all of its jobs at once or none, is read as
one unit (progress, expected duration, what was left out and why) and cancelled as one; who may do what."""
from hostbench_common.suites import BUILTIN, HostInfo, expected_duration, plan
from sqlalchemy import func, select

from app.jobs.models import Job, Run
from tests.conftest import make_user


def _second_host(client, session, name="test-host-2"):
    from app.hosts.service import create_registration_token

    token, _ = create_registration_token(session)
    r = client.post("/api/runners/register", json={"registration_token": token, "name": name,
                                                   "hostname": f"{name}.local", "version": "0"})
    assert r.status_code == 201, r.text
    return r.json()["host_id"]


def test_the_suites_are_listed_with_their_items_and_one_host_duration(client):
    r = client.get("/api/suites")
    assert r.status_code == 200, r.text
    got = {s["id"]: s for s in r.json()["data"]}
    assert set(got) == set(BUILTIN)
    quick = got["quick"]
    assert [i["experiment"] for i in quick["items"]] == [i.experiment for i in BUILTIN["quick"].items]
    one, _ = plan(BUILTIN["quick"].items, [HostInfo(0)])
    assert quick["expected_duration_one_host_s"] == round(expected_duration(one), 1)


def test_a_suite_on_one_host_makes_every_job_it_plans_there_and_reads_as_one_unit(client, session, runner):
    host_id, _ = runner
    r = client.post("/api/suite-runs", json={"suite": "quick", "host_ids": [host_id]})
    assert r.status_code == 201, r.text
    sr = r.json()
    planned, skipped = plan(BUILTIN["quick"].items, [HostInfo(host_id)])
    assert sr["skipped"] == skipped == []
    assert sr["expected_duration_s"] == round(expected_duration(planned), 1)
    jobs = session.scalars(select(Job).where(Job.suite_run_id == sr["id"])).all()
    assert [j.experiment for j in jobs] == [p.experiment for p in planned]
    runs = session.scalar(select(func.count()).select_from(Run).join(Job, Job.id == Run.job_id)
                          .where(Job.suite_run_id == sr["id"]))
    assert sr["runs_total"] == runs == len(sr["runs"]) and runs > len(jobs)  # op lists fan out, one run per op
    assert sr["status"] == "running" and sr["runs_done"] == 0 and sr["progress"] == 0
    # each run of a kind with an op carries its one op (disk loops over its own list of ops inside one run)
    assert all(run["op"] for run in sr["runs"] if run["experiment"] != "disk")
    assert [run["op"] for run in sr["runs"] if run["experiment"] == "cpu"] == ["fp64", "int32"]
    again = client.get(f"/api/suite-runs/{sr['id']}").json()
    assert again["runs_total"] == runs and again["title"] == BUILTIN["quick"].title
    assert any(s["id"] == sr["id"] for s in client.get("/api/suite-runs").json()["data"])


def test_cancel_ends_every_run_of_the_suite_and_only_those(client, session, runner):
    host_id, _ = runner
    other = client.post("/api/jobs", json={"experiment": "cpu", "host_ids": [host_id],
                                           "params": {"op": "fp64", "threads": [1], "duration_s": 1}})
    assert other.status_code == 201, other.text
    sr = client.post("/api/suite-runs", json={"suite": "quick", "host_ids": [host_id]}).json()
    r = client.post(f"/api/suite-runs/{sr['id']}/cancel")
    assert r.status_code == 202, r.text
    body = r.json()
    assert body["status"] == "cancelled" and body["progress"] == 1 and body["runs_done"] == body["runs_total"]
    assert {run["status"] for run in body["runs"]} == {"cancelled"} and body["cancelled_by"] == "test-admin"
    assert client.get(f"/api/runs/{other.json()['runs'][0]['id']}").json()["status"] == "queued"


def test_two_host_items_run_only_when_two_hosts_are_picked(client, session, runner):
    host_id, _ = runner
    one = client.post("/api/suite-runs", json={"suite": "full", "host_ids": [host_id]}).json()
    assert any("needs 2 hosts" in s for s in one["skipped"]), one["skipped"]
    assert "network_pair" not in {r["experiment"] for r in one["runs"]}
    client.post(f"/api/suite-runs/{one['id']}/cancel")
    second = _second_host(client, session)
    two = client.post("/api/suite-runs", json={"suite": "full", "host_ids": [host_id, second]})
    assert two.status_code == 201, two.text
    pair = [r for r in two.json()["runs"] if r["experiment"] in ("network_serve", "network_drive")]
    assert pair and {r["host_id"] for r in pair} == {host_id, second}
    assert not any("needs 2 hosts" in s for s in two.json()["skipped"])


def test_a_peer_serves_every_two_host_item_and_runs_nothing_else(client, session, runner):
    """The full suite on one host with a peer: the host runs every item, the peer only serves the two-host ones."""
    host_id, _ = runner
    peer = _second_host(client, session, "peer-host")
    r = client.post("/api/suite-runs", json={"suite": "full", "host_ids": [host_id], "peer_host_id": peer})
    assert r.status_code == 201, r.text
    sr = r.json()
    assert sr["peer_host_id"] == peer and sr["host_ids"] == [host_id]
    assert not any("needs 2 hosts" in s for s in sr["skipped"]), sr["skipped"]
    on_peer = {run["experiment"] for run in sr["runs"] if run["host_id"] == peer}
    assert on_peer == {"network_serve"}  # nothing else of the suite touches the peer
    drives = [run for run in sr["runs"] if run["experiment"] == "network_drive"]
    assert len(drives) == 4 and {run["host_id"] for run in drives} == {host_id}
    planned, _ = plan(BUILTIN["full"].items, [HostInfo(host_id)], HostInfo(peer))
    assert sr["expected_duration_s"] == round(expected_duration(planned), 1)
    client.post(f"/api/suite-runs/{sr['id']}/cancel")
    # the peer cannot also be a host picked, and must be a registered host
    both = client.post("/api/suite-runs", json={"suite": "full", "host_ids": [host_id], "peer_host_id": host_id})
    assert both.status_code == 422 and "picked too" in both.text, both.text
    gone = client.post("/api/suite-runs", json={"suite": "full", "host_ids": [host_id], "peer_host_id": 99999})
    assert gone.status_code == 422 and "peer_host_id" in gone.text, gone.text


def test_bad_bodies_are_refused_with_4xx_and_leave_nothing_behind(client, session, runner):
    host_id, _ = runner
    before = session.scalar(select(func.count()).select_from(Job))
    for body, status in (({"suite": "nope", "host_ids": [host_id]}, 404),
                         ({"suite": "quick", "host_ids": []}, 422),
                         ({"suite": "quick", "host_ids": [host_id, host_id]}, 422),
                         ({"suite": "quick", "host_ids": [999999]}, 422),
                         ({"suite": "Quick Check!", "host_ids": [host_id]}, 422),
                         ({"suite": "quick", "host_ids": [host_id], "extra": 1}, 422)):
        r = client.post("/api/suite-runs", json=body)
        assert r.status_code == status, (body, r.status_code, r.text)
    assert client.get("/api/suite-runs/999999").status_code == 404
    assert session.scalar(select(func.count()).select_from(Job)) == before


def test_a_suite_over_the_active_run_cap_makes_no_job_at_all(client, session, runner, monkeypatch):
    """All or none: the admission caps count every run of the suite; a refusal leaves no job behind."""
    from app.core.config import get_settings

    host_id, _ = runner
    monkeypatch.setattr(get_settings(), "max_active_runs_per_user", 3)
    before = session.scalar(select(func.count()).select_from(Job))
    r = client.post("/api/suite-runs", json={"suite": "quick", "host_ids": [host_id]})
    assert r.status_code == 429 and "Retry-After" in r.headers, r.text
    session.expire_all()
    assert session.scalar(select(func.count()).select_from(Job)) == before


def test_viewers_read_suites_operators_start_and_cancel_them(anon_client, session, runner, client):
    host_id, _ = runner
    viewer = make_user(session, "suite-viewer", "viewer")
    operator = make_user(session, "suite-operator", "operator")
    assert anon_client.get("/api/suites").status_code == 401
    assert anon_client.get("/api/suite-runs").status_code == 401
    assert anon_client.get("/api/suites", headers=viewer).status_code == 200
    r = anon_client.post("/api/suite-runs", json={"suite": "quick", "host_ids": [host_id]}, headers=viewer)
    assert r.status_code == 403, r.text
    r = anon_client.post("/api/suite-runs", json={"suite": "quick", "host_ids": [host_id]}, headers=operator)
    assert r.status_code == 201, r.text
    sr = r.json()["id"]
    assert anon_client.get(f"/api/suite-runs/{sr}", headers=viewer).status_code == 200
    assert anon_client.post(f"/api/suite-runs/{sr}/cancel", headers=viewer).status_code == 403
    assert anon_client.post(f"/api/suite-runs/{sr}/cancel").status_code == 401
    assert anon_client.post(f"/api/suite-runs/{sr}/cancel", headers=operator).status_code == 202


MINE = {"title": "My CPU check", "description": "two ops, short",
        "items": [{"experiment": "cpu", "params": {"op": ["fp64", "fp32"], "threads": [1], "duration_s": 1,
                                                   "repeats": 1, "warmup_s": 0}},
                  {"experiment": "network_pair", "params": {"op": "tcp_stream", "sizes": [1024], "duration_s": 1}}]}


def test_a_saved_suite_is_checked_when_saved_exported_imported_and_run_like_a_built_in_one(client, session, runner):
    host_id, _ = runner
    r = client.post("/api/suites", json=MINE)
    assert r.status_code == 201, r.text
    saved = r.json()
    assert saved["id"].startswith("saved-") and saved["builtin"] is False and saved["created_by"] == "test-admin"
    assert saved["id"] in {s["id"] for s in client.get("/api/suites").json()["data"]}
    export = client.get(f"/api/suites/{saved['id']}").json()
    assert export == saved
    again = client.post("/api/suites", json=export)  # the export is the import format
    assert again.status_code == 201 and again.json()["items"] == saved["items"], again.text
    sr = client.post("/api/suite-runs", json={"suite": saved["id"], "host_ids": [host_id]})
    assert sr.status_code == 201, sr.text
    body = sr.json()
    assert [r["op"] for r in body["runs"]] == ["fp64", "fp32"] and body["title"] == "My CPU check"
    assert any("needs 2 hosts" in s for s in body["skipped"])
    client.post(f"/api/suite-runs/{body['id']}/cancel")
    changed = client.put(f"/api/suites/{saved['id']}", json={**MINE, "title": "Renamed"})
    assert changed.status_code == 200 and changed.json()["title"] == "Renamed", changed.text
    assert client.delete(f"/api/suites/{saved['id']}").status_code == 204
    assert client.get(f"/api/suites/{saved['id']}").status_code == 404
    assert client.get(f"/api/suite-runs/{body['id']}").json()["title"] == "My CPU check"  # the run keeps its title


def test_a_suite_that_could_not_run_is_refused_when_saved_naming_the_item(client):
    bad_op = {**MINE, "items": [{"experiment": "cpu", "params": {"op": ["fp64", "nope"]}}]}
    r = client.post("/api/suites", json=bad_op)
    assert r.status_code == 422 and "items[0]" in r.text, r.text
    r = client.post("/api/suites", json={**MINE, "items": [{"experiment": "nonesuch", "params": {}}]})
    assert r.status_code == 422 and "unknown experiment" in r.text, r.text
    r = client.post("/api/suites", json={**MINE, "items": []})
    assert r.status_code == 422
    assert client.put("/api/suites/quick", json=MINE).status_code == 409  # built in: save a copy instead
    assert client.delete("/api/suites/quick").status_code == 409
    assert client.delete("/api/suites/saved-999999").status_code == 404


def test_only_its_owner_or_an_admin_changes_a_saved_suite(anon_client, session, client):
    owner = make_user(session, "suite-owner", "operator")
    other = make_user(session, "suite-other", "operator")
    viewer = make_user(session, "suite-viewer2", "viewer")
    assert anon_client.post("/api/suites", json=MINE, headers=viewer).status_code == 403
    assert anon_client.post("/api/suites", json=MINE).status_code == 401
    sid = anon_client.post("/api/suites", json=MINE, headers=owner).json()["id"]
    assert anon_client.get(f"/api/suites/{sid}", headers=viewer).status_code == 200
    assert anon_client.put(f"/api/suites/{sid}", json=MINE, headers=other).status_code == 403
    assert anon_client.delete(f"/api/suites/{sid}", headers=other).status_code == 403
    assert anon_client.put(f"/api/suites/{sid}", json=MINE, headers=owner).status_code == 200
    assert client.delete(f"/api/suites/{sid}").status_code == 204  # an admin may


def test_each_run_of_a_suite_run_says_its_headline_verdict_and_when_it_ended(client, session, runner):
    """Issue 32: the suite run page listed its runs with their status only."""
    from app.jobs import dispatch

    host_id, headers = runner
    sr = client.post("/api/suite-runs", json={"suite": "quick", "host_ids": [host_id]}).json()
    dispatch.dispatch_host(session, host_id)
    a = client.get("/api/runner/work?wait_s=0", headers=headers).json()
    run_id = a["run_id"]
    assert a["experiment"] == "cpu" and a["params"]["op"] == "fp64"
    client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": a["attempt"], "kernel_info": {"clock_ghz": 3.65}},
                headers=headers)
    r = client.post(f"/api/runner/runs/{run_id}/finish", headers=headers, json={
        "attempt": a["attempt"], "status": "succeeded",
        "results": [{"threads": t, "repeat": k, "value": 10.0 * t + k, "unit": "GFLOP/s", "verified": True,
                     "cpu_ns": 7} for t in a["params"]["threads"] for k in (1, 2)]})
    assert r.status_code in (200, 204), r.text
    runs = {x["id"]: x for x in client.get(f"/api/suite-runs/{sr['id']}").json()["runs"]}
    done = runs[run_id]
    own = client.get(f"/api/runs/{run_id}").json()
    assert done["status"] == "succeeded" and done["finished_at"] and done["started_at"]
    assert done["headline"] == own["result"]["headline"]["text"] and done["headline"].startswith("best ")
    assert done["verdict"] == own["result"]["verdict"]
    waiting = [x for x in runs.values() if x["id"] != run_id]
    assert waiting and all(x["headline"] is None and x["verdict"] is None and x["finished_at"] is None
                           for x in waiting)
