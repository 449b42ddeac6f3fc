"""Schedules (app.schedules): bounds and roles of the routes, and the beat firing (service.fire_due) on the real
PostgreSQL: a due schedule starts a suite run; busy and offline hosts are left out with the reason; a label is
resolved when it fires; a row another firer holds is skipped and two firers never fire one due time twice; a
schedule that missed several periods fires once."""
import threading
from datetime import timedelta

import pytest
from sqlalchemy import func, select, text

from app.core.db import get_sessionmaker, utcnow
from app.jobs.models import Job, SuiteRun
from app.schedules import service
from app.schedules.models import Schedule, ScheduleFiring
from tests.conftest import make_user

EVERY_HOUR = {"title": "hourly quick", "suite": "quick", "interval_s": 3600}


@pytest.fixture(autouse=True)
def _no_schedules_left():
    yield
    with get_sessionmaker()() as s:
        s.execute(text("delete from schedules"))
        s.commit()


def _host(client, session, name: str, labels: dict | None = None) -> int:
    from app.hosts.service import create_registration_token

    token, _ = create_registration_token(session)
    r = client.post("/api/runners/register", json={"registration_token": token, "name": name,
                                                   "hostname": f"{name}.local", "version": "0",
                                                   "labels": labels or {}})
    assert r.status_code == 201, r.text
    host_id = r.json()["host_id"]
    _seen(session, host_id, 0)
    return host_id


def _seen(session, host_id: int, seconds_ago: float) -> None:
    session.execute(text("update hosts set last_seen_at = :t where id = :id"),
                    {"t": utcnow() - timedelta(seconds=seconds_ago), "id": host_id})
    session.commit()


def _due(session, schedule_id: int, ago_s: float = 1) -> None:
    session.execute(text("update schedules set next_fire_at = :t where id = :id"),
                    {"t": utcnow() - timedelta(seconds=ago_s), "id": schedule_id})
    session.commit()


def _fire() -> int:
    with get_sessionmaker()() as s:
        return service.fire_due(s)


def _firings(session, schedule_id: int) -> list[ScheduleFiring]:
    session.expire_all()
    return list(session.scalars(select(ScheduleFiring).where(ScheduleFiring.schedule_id == schedule_id)
                                .order_by(ScheduleFiring.id)))


def test_a_schedule_is_created_listed_with_its_next_three_times_and_previewed(client, session):
    host = _host(client, session, "sched-a")
    before = utcnow()
    r = client.post("/api/schedules", json={**EVERY_HOUR, "host_ids": [host]})
    assert r.status_code == 201, r.text
    s = r.json()
    assert s["created_by"] == "test-admin" and s["enabled"] and s["suite_title"] == "Quick health check"
    assert s["last_firing"] is None and s["label"] is None and s["host_ids"] == [host]
    first = s["next"][0]
    assert s["next_fire_at"] == first and len(s["next"]) == 3
    from datetime import datetime

    times = [datetime.fromisoformat(t) for t in s["next"]]
    assert before + timedelta(seconds=3600) <= times[0] <= utcnow() + timedelta(seconds=3600)
    assert [(b - a).total_seconds() for a, b in zip(times, times[1:], strict=False)] == [3600, 3600]
    assert [x["id"] for x in client.get("/api/schedules").json()["data"]] == [s["id"]]
    assert client.get(f"/api/schedules/{s['id']}").json()["next"] == s["next"]
    p = client.get("/api/schedules/preview", params={"cron": "0 3 * * mon"}).json()["next"]
    assert len(p) == 3 and all(datetime.fromisoformat(t).strftime("%a %H:%M") == "Mon 03:00" for t in p)
    r = client.post("/api/schedules", json={"title": "by cron", "suite": "quick", "cron": " 0  3 * * mon ",
                                            "label": "provider=test"})
    assert r.status_code == 201 and r.json()["cron"] == "0 3 * * mon" and r.json()["next"] == p, r.text
    assert r.json()["label"] == "provider=test" and r.json()["host_ids"] is None


def test_bad_input_is_a_clear_422_or_404_and_saves_nothing(client, session):
    host = _host(client, session, "sched-b")
    ok = {**EVERY_HOUR, "host_ids": [host]}
    for body, where in (({**ok, "interval_s": 60}, "interval_s"),
                        ({**ok, "interval_s": 91 * 86400}, "interval_s"),
                        ({**ok, "interval_s": "3600"}, "interval_s"),
                        ({**ok, "cron": "0 3 * * *"}, "exactly one of interval_s and cron"),
                        ({"title": "x", "suite": "quick", "host_ids": [host]}, "exactly one of interval_s and cron"),
                        ({**{k: v for k, v in ok.items() if k != "interval_s"}, "cron": "61 * * * *"}, "outside 0-59"),
                        ({**{k: v for k, v in ok.items() if k != "interval_s"}, "cron": "0 0 30 2 *"}, "never fires"),
                        ({**{k: v for k, v in ok.items() if k != "interval_s"}, "cron": "@daily"}, "5 fields (minute hour"),
                        ({**ok, "suite": "nonesuch"}, "suite"),
                        ({**ok, "suite": "saved-999999"}, "suite"),
                        ({**ok, "host_ids": [999999]}, "host 999999 is not a registered host"),
                        ({**ok, "host_ids": [host, host]}, "listed twice"),
                        ({**ok, "host_ids": []}, "host_ids"),
                        ({**ok, "host_ids": list(range(1, 18))}, "host_ids"),
                        ({**ok, "label": "provider=test"}, "exactly one of host_ids and label"),
                        ({**{k: v for k, v in ok.items() if k != "host_ids"}, "label": "no equals"}, "label"),
                        ({**ok, "title": ""}, "title"),
                        ({**ok, "extra": 1}, "extra")):
        r = client.post("/api/schedules", json=body)
        assert r.status_code == 422 and where in r.text, (body, r.status_code, r.text)
    assert client.get("/api/schedules").json()["data"] == []
    assert client.get("/api/schedules/999999").status_code == 404
    assert client.get("/api/schedules/999999/history").status_code == 404
    assert client.post("/api/schedules/999999/run-now").status_code == 404
    assert client.get("/api/schedules/0").status_code == 422
    s = client.post("/api/schedules", json=ok).json()
    assert client.get(f"/api/schedules/{s['id']}/history", params={"limit": 101}).status_code == 422
    assert client.get(f"/api/schedules/{s['id']}/history", params={"offset": -1}).status_code == 422
    assert client.get("/api/schedules/preview", params={"cron": "nope"}).status_code == 422
    assert client.get("/api/schedules/preview", params={"interval_s": 10}).status_code == 422
    r = client.get("/api/schedules/preview")
    assert r.status_code == 422 and "exactly one" in r.text, r.text


def test_viewers_read_operators_create_only_owner_or_admin_change(anon_client, client, session):
    host = _host(client, session, "sched-c")
    viewer = make_user(session, "sched-viewer", "viewer")
    owner = make_user(session, "sched-owner", "operator")
    other = make_user(session, "sched-other", "operator")
    body = {**EVERY_HOUR, "host_ids": [host]}
    assert anon_client.get("/api/schedules").status_code == 401
    assert anon_client.post("/api/schedules", json=body).status_code == 401
    assert anon_client.post("/api/schedules", json=body, headers=viewer).status_code == 403
    r = anon_client.post("/api/schedules", json=body, headers=owner)
    assert r.status_code == 201 and r.json()["created_by"] == "sched-owner", r.text
    sid = r.json()["id"]
    assert anon_client.get("/api/schedules", headers=viewer).status_code == 200
    assert anon_client.get(f"/api/schedules/{sid}", headers=viewer).status_code == 200
    assert anon_client.get(f"/api/schedules/{sid}/history", headers=viewer).status_code == 200
    assert anon_client.get("/api/schedules/preview", params={"interval_s": 300}, headers=viewer).status_code == 200
    assert anon_client.post(f"/api/schedules/{sid}/run-now", headers=viewer).status_code == 403
    assert anon_client.put(f"/api/schedules/{sid}", json=body, headers=viewer).status_code == 403
    r = anon_client.put(f"/api/schedules/{sid}", json={**body, "title": "not mine"}, headers=other)
    assert r.status_code == 403 and "sched-owner" in r.text, r.text
    assert anon_client.delete(f"/api/schedules/{sid}", headers=other).status_code == 403
    r = anon_client.put(f"/api/schedules/{sid}", json={**body, "title": "mine"}, headers=owner)
    assert r.status_code == 200 and r.json()["title"] == "mine", r.text
    assert client.put(f"/api/schedules/{sid}", json={**body, "title": "the admin's"}).status_code == 200
    assert anon_client.post(f"/api/schedules/{sid}/run-now", headers=other).status_code == 201  # any operator
    assert anon_client.delete(f"/api/schedules/{sid}", headers=viewer).status_code == 403
    assert client.delete(f"/api/schedules/{sid}").status_code == 204  # an admin may
    assert client.get(f"/api/schedules/{sid}").status_code == 404
    actions = [e["action"] for e in client.get("/api/audit", params={"limit": 50}).json()["data"]]
    assert {"schedule.create", "schedule.update", "schedule.run_now", "schedule.delete"} <= set(actions)


def test_a_due_schedule_starts_a_suite_run_once_and_moves_past_now(client, session):
    host = _host(client, session, "sched-d")
    sid = client.post("/api/schedules", json={**EVERY_HOUR, "host_ids": [host]}).json()["id"]
    assert _fire() == 0  # not due yet
    _due(session, sid)
    assert _fire() == 1
    [f] = _firings(session, sid)
    assert f.outcome == "started" and f.trigger == "beat" and f.host_ids == [host] and f.skipped == []
    sr = session.get(SuiteRun, f.suite_run_id)
    assert sr is not None and sr.suite == "quick" and sr.host_ids == [host] and sr.created_by == "test-admin"
    assert session.scalar(select(func.count()).select_from(Job).where(Job.suite_run_id == sr.id)) > 0
    assert session.get(Schedule, sid).next_fire_at > utcnow()
    assert _fire() == 0 and len(_firings(session, sid)) == 1
    h = client.get(f"/api/schedules/{sid}/history").json()
    assert h["count"] == 1 and h["data"][0]["suite_run_id"] == sr.id and h["data"][0]["outcome"] == "started"
    assert client.get("/api/schedules").json()["data"][0]["last_firing"]["id"] == h["data"][0]["id"]


def test_busy_and_offline_hosts_are_left_out_with_the_reason_and_the_rest_start(client, session, runner):
    busy, _ = runner
    _seen(session, busy, 0)
    free = _host(client, session, "sched-free")
    gone = _host(client, session, "sched-offline")
    _seen(session, gone, 3600)
    r = client.post("/api/jobs", json={"experiment": "cpu", "host_ids": [busy],
                                       "params": {"op": "fp64", "threads": [1], "duration_s": 1}})
    assert r.status_code == 201, r.text
    sid = client.post("/api/schedules", json={**EVERY_HOUR, "host_ids": [busy, free, gone]}).json()["id"]
    _due(session, sid)
    assert _fire() == 1
    [f] = _firings(session, sid)
    assert f.outcome == "started" and f.host_ids == [free]
    reasons = {x["host_id"]: x["reason"] for x in f.skipped}
    assert set(reasons) == {busy, gone}
    assert reasons[busy].startswith("busy") and reasons[gone].startswith("offline")
    assert session.get(SuiteRun, f.suite_run_id).host_ids == [free]
    # now every one of them is busy or offline: skipped, saying why for each
    _due(session, sid)
    assert _fire() == 1
    g = _firings(session, sid)[-1]
    assert g.outcome == "skipped" and g.suite_run_id is None and g.host_ids == []
    assert "sched-free: busy" in g.reason and "sched-offline: offline" in g.reason, g.reason


def test_a_label_is_resolved_when_the_schedule_fires(client, session):
    a = _host(client, session, "sched-l1", {"region": "eu-west-1"})
    _host(client, session, "sched-l2", {"region": "us-east-1"})
    sid = client.post("/api/schedules", json={**EVERY_HOUR, "label": "region=eu-west-1"}).json()["id"]
    none = client.post("/api/schedules", json={**EVERY_HOUR, "label": "region=ap-south-1"}).json()["id"]
    b = _host(client, session, "sched-l3", {"region": "eu-west-1"})  # joins the label after the schedule was made
    _due(session, sid)
    _due(session, none)
    assert _fire() == 2
    [f] = _firings(session, sid)
    assert f.outcome == "started" and f.host_ids == [a, b]
    [g] = _firings(session, none)
    assert g.outcome == "skipped" and g.reason == "no host carries the label region=ap-south-1"


def test_a_refused_suite_run_is_a_failed_firing_with_the_reason(client, session, monkeypatch):
    from app.core.config import get_settings

    host = _host(client, session, "sched-f")
    mine = {"title": "mine", "items": [{"experiment": "cpu", "params": {"op": "fp64", "threads": [1],
                                                                         "duration_s": 1}}]}
    saved = client.post("/api/suites", json=mine).json()["id"]
    gone = client.post("/api/schedules", json={**EVERY_HOUR, "suite": saved, "host_ids": [host]}).json()["id"]
    assert client.delete(f"/api/suites/{saved}").status_code == 204
    capped = client.post("/api/schedules", json={**EVERY_HOUR, "host_ids": [host]}).json()["id"]
    monkeypatch.setattr(get_settings(), "max_active_runs_per_user", 3)  # the quick suite is more runs than that
    suite_runs = session.scalar(select(func.count()).select_from(SuiteRun))
    _due(session, gone)
    _due(session, capped)
    assert _fire() == 2
    [f] = _firings(session, gone)
    assert f.outcome == "failed" and saved in f.reason and "not found" in f.reason
    [g] = _firings(session, capped)
    assert g.outcome == "failed" and "429" in g.reason and g.suite_run_id is None, g.reason
    assert session.scalar(select(func.count()).select_from(SuiteRun)) == suite_runs  # nothing half-made
    assert session.get(Schedule, capped).next_fire_at > utcnow()
    listed = {s["id"]: s for s in client.get("/api/schedules").json()["data"]}
    assert listed[gone]["suite_title"] is None and listed[capped]["last_firing"]["outcome"] == "failed"


def test_a_row_another_firer_holds_is_skipped_and_two_firers_fire_once(client, session):
    host = _host(client, session, "sched-lock")
    sid = client.post("/api/schedules", json={**EVERY_HOUR, "host_ids": [host]}).json()["id"]
    _due(session, sid)
    with get_sessionmaker()() as holder:
        holder.execute(text("select id from schedules where id = :id for update"), {"id": sid})
        assert _fire() == 0  # SKIP LOCKED: the pass goes on without waiting
        holder.rollback()
    assert _firings(session, sid) == []
    suite_runs = session.scalar(select(func.count()).select_from(SuiteRun))
    barrier, fired = threading.Barrier(4), []

    def firer() -> None:
        barrier.wait()
        fired.append(_fire())

    threads = [threading.Thread(target=firer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(fired) == [0, 0, 0, 1]
    assert len(_firings(session, sid)) == 1
    assert session.scalar(select(func.count()).select_from(SuiteRun)) == suite_runs + 1


def test_a_schedule_that_missed_several_periods_fires_once_and_keeps_its_phase(client, session):
    host = _host(client, session, "sched-miss")
    body = {**EVERY_HOUR, "interval_s": 300, "host_ids": [host]}
    sid = client.post("/api/schedules", json=body).json()["id"]
    _due(session, sid, ago_s=10 * 300 + 17)  # the server was down for ten periods
    session.expire_all()
    due = session.get(Schedule, sid).next_fire_at
    assert _fire() == 1 and _fire() == 0
    assert len(_firings(session, sid)) == 1
    nxt = session.get(Schedule, sid).next_fire_at
    now = utcnow()
    assert now < nxt <= now + timedelta(seconds=300)
    assert (nxt - due).total_seconds() % 300 == 0  # still on its own times: due + k * interval
    # a cron schedule: its next time after now
    cid = client.post("/api/schedules", json={"title": "c", "suite": "quick", "cron": "*/5 * * * *",
                                              "host_ids": [host]}).json()["id"]
    _due(session, cid, ago_s=3 * 86400)
    assert _fire() == 1 and len(_firings(session, cid)) == 1
    session.expire_all()
    c_next = session.get(Schedule, cid).next_fire_at
    assert utcnow() < c_next <= utcnow() + timedelta(minutes=5) and c_next.minute % 5 == 0


def test_disabled_schedules_do_not_fire_and_run_now_fires_without_moving_the_next_time(client, session):
    host = _host(client, session, "sched-off")
    body = {**EVERY_HOUR, "host_ids": [host]}
    s = client.post("/api/schedules", json={**body, "enabled": False}).json()
    assert s["next_fire_at"] is None and s["next"] == []
    _due(session, s["id"])
    assert _fire() == 0 and _firings(session, s["id"]) == []
    r = client.post(f"/api/schedules/{s['id']}/run-now")
    assert r.status_code == 201 and r.json()["outcome"] == "started" and r.json()["trigger"] == "run-now", r.text
    assert r.json()["suite_run_id"] and client.get(f"/api/suite-runs/{r.json()['suite_run_id']}").status_code == 200
    again = client.post(f"/api/schedules/{s['id']}/run-now").json()  # the host has the first one's runs queued
    assert again["outcome"] == "skipped" and again["skipped"][0]["reason"].startswith("busy"), again
    on = client.put(f"/api/schedules/{s['id']}", json=body).json()  # enabled again: counts from now
    assert on["next_fire_at"] is not None and len(on["next"]) == 3
    h = client.get(f"/api/schedules/{s['id']}/history", params={"limit": 1}).json()
    assert h["count"] == 2 and len(h["data"]) == 1 and h["data"][0]["outcome"] == "skipped"
    assert client.get(f"/api/schedules/{s['id']}/history", params={"limit": 1, "offset": 1}).json()[
        "data"][0]["outcome"] == "started"


def test_a_fault_in_one_schedule_is_its_failed_firing_and_the_pass_goes_on(client, session, monkeypatch):
    host = _host(client, session, "sched-fault")
    first = client.post("/api/schedules", json={**EVERY_HOUR, "host_ids": [host]}).json()["id"]
    second = client.post("/api/schedules", json={**EVERY_HOUR, "label": "nobody=here"}).json()["id"]
    _due(session, first, ago_s=20)  # the earlier due: fired first
    _due(session, second, ago_s=10)

    def broken(*_a, **_k):
        raise RuntimeError("a bug")

    monkeypatch.setattr(service.suites, "start", broken)
    assert _fire() == 2
    [f] = _firings(session, first)
    assert f.outcome == "failed" and f.reason == "internal error: RuntimeError" and f.suite_run_id is None
    assert session.get(Schedule, first).next_fire_at > utcnow()
    assert [g.outcome for g in _firings(session, second)] == ["skipped"]
