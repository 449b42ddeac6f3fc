"""Bad input gets a clear 4xx and nothing is queued."""
import time

import pytest
from sqlalchemy import func, select

from app.core.broker import get_redis
from app.jobs.models import Job, Run


def _nothing_queued(session) -> None:
    assert session.scalar(select(func.count()).select_from(Job)) == 0
    assert session.scalar(select(func.count()).select_from(Run)) == 0
    assert get_redis().llen("celery") == 0


@pytest.mark.parametrize(("threads", "needle"), [
    (-1, "greater than or equal to 1"),
    (10**9, "less than or equal to 256"),
    ("4; rm -rf /", "valid integer"),
    (0, "greater than or equal to 1"),
    (2.5, "valid integer"),
])
def test_create_job_rejects_bad_thread_count(client, session, runner, threads, needle):
    host_id, _ = runner
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu", "params": {"threads": [threads]}})
    assert r.status_code == 422
    detail = r.json()["detail"]
    assert any(d["loc"][-2:] == ["threads", 0] and needle in d["msg"] for d in detail), detail
    _nothing_queued(session)


def test_create_job_rejects_string_threads(client, session, runner):
    host_id, _ = runner
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu", "params": {"threads": "4; rm -rf /"}})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"][-1] == "threads"
    _nothing_queued(session)


def test_create_job_rejects_unknown_host(client, session, runner):
    r = client.post("/api/jobs", json={"host_ids": [999], "experiment": "cpu"})
    assert r.status_code == 422
    assert r.json()["detail"] == "host_ids[0]: host 999 is not a registered host"
    _nothing_queued(session)


@pytest.mark.parametrize("body", [
    {"experiment": "cpu", "params": {"threads": [1], "shell": "rm -rf /"}},
    {"experiment": "cpu", "params": {}, "priority": 1},
])
def test_create_job_rejects_unknown_field(client, session, runner, body):
    host_id, _ = runner
    r = client.post("/api/jobs", json={"host_ids": [host_id], **body})
    assert r.status_code == 422
    assert any(d["type"] == "extra_forbidden" for d in r.json()["detail"])
    _nothing_queued(session)


@pytest.mark.parametrize("body", [
    {"experiment": "gpu_mining"},
    {"experiment": "cpu", "host_ids": []},
    {"experiment": "cpu", "params": {"repeats": 0}},
    {"experiment": "cpu", "params": {"duration_s": 1e9}},
    {"experiment": "cpu", "params": {"op": "fp128"}},
    {"experiment": "cpu", "params": {"threads": [1, 1]}},
    {"experiment": "cpu_trace", "params": {"threads": [2]}},
    {"experiment": "cpu_trace", "params": {"duration_s": 0}},
])
def test_create_job_rejects_out_of_bounds(client, session, runner, body):
    host_id, _ = runner
    r = client.post("/api/jobs", json={"host_ids": [host_id], **body})
    assert r.status_code == 422, r.text
    _nothing_queued(session)


def test_create_job_rejects_non_json(client, session, runner):
    r = client.post("/api/jobs", content=b"threads=4", headers={"content-type": "application/json"})
    assert r.status_code == 422
    _nothing_queued(session)


def test_create_job_queues_one_run_per_host(client, session, runner):
    host_id, _ = runner
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu"})
    assert r.status_code == 201, r.text
    run = r.json()["runs"][0]
    assert run["status"] == "queued"
    assert run["params"] == {"op": "fp64", "isa": "auto", "threads": [1, 2, 4, 8], "repeats": 3, "duration_s": 5.0,
                             "warmup_s": 1.0, "stable_cv": 0.0, "max_repeats": 10, "quiet_wait_s": 0.0,
                             "disturbed_retries": 0, "work": 0, "reference": False, "hpl_n": 0}
    assert run["expected_duration_s"] == 4 * (1 + 3 * 5)
    # the doorbell, rung after the commit by the broker's sender thread (app/core/broker.py): soon, not at once
    deadline = time.monotonic() + 5
    while get_redis().llen("celery") == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert get_redis().llen("celery") == 1


def test_runner_endpoints_need_the_runner_credential(client, runner):
    assert client.get("/api/runner/work?wait_s=0").status_code == 401
    r = client.post("/api/runner/heartbeat", json={}, headers={"Authorization": "Bearer hbrun_forged"})
    assert r.status_code == 401
    assert r.json()["detail"] == "runner credential unknown or revoked"


def test_register_refuses_unknown_token(client):
    r = client.post("/api/runners/register", json={"registration_token": "hbreg_nope_nope", "name": "x", "hostname": "x"})
    assert r.status_code == 401


def test_read_run_not_found(client):
    r = client.get("/api/runs/12345")
    assert r.status_code == 404
    assert r.json() == {"detail": "run 12345 not found"}


def test_health_reports_database_broker_and_runners(client, runner):
    from app.worker import tasks

    tasks.reconcile()  # what beat does every period: a reconciler pass, and the "beat" mark
    r = client.get("/api/health")
    assert r.status_code == 200
    assert r.json() | {"version": None} == {"status": "ok", "database": "ok", "broker": "ok", "reconciler": "ok",
                                            "scheduler": "ok", "runners_online": 1, "version": None}


def test_health_says_when_beat_and_the_reconciler_have_not_run(client, session):
    """Beat hung or dead, and no API process reconciling (this test's app runs none): health must say so, not
    "ok" (issue 12: a hung beat left a run "running" for 90 s while health said ok)."""
    from datetime import timedelta

    from app.core.db import utcnow
    from app.jobs import dispatch

    long_ago = utcnow() - timedelta(minutes=10)
    try:
        dispatch.mark(session, "beat", long_ago)
        dispatch.mark(session, "reconciled", long_ago)
        h = client.get("/api/health").json()
        assert h["status"] == "degraded", h
        assert h["scheduler"].startswith("late: Celery beat's reconcile task last ran 6"), h
        assert h["reconciler"].startswith("late: the reconciler last ran 6"), h
    finally:  # an old "reconciled" mark would make the next test's reconcile pass renew leases first
        dispatch.mark(session, "beat")
        dispatch.mark(session, "reconciled")


@pytest.mark.parametrize(("url", "part"), [
    ("/api/runs?instance_type=1%00x&region=eu", "query"),  # schemathesis's stateful phase found this one: a 500
    ("/api/runs?provider=%00", "query"),
    ("/api/hosts?label=a%00b", "query"),
    ("/api/users/%00", "path"),
])
def test_a_nul_in_the_url_is_a_422_not_a_500(client, url, part):
    r = client.get(url)
    assert r.status_code == 422, r.text
    [d] = r.json()["detail"]
    assert d["loc"] == [part] and d["type"] == "string_nul" and "NUL" in d["msg"]


def test_a_url_without_nul_still_reaches_its_route(client):
    assert client.get("/api/runs?instance_type=c7a.large").status_code == 200


def test_a_parameter_no_run_would_use_is_refused_naming_what_it_applies_to(client, session, runner):
    """Issue 32: STREAM accepted `blocks` through the API silently (and the run page listed `blocks=` beside it)."""
    host_id, _ = runner
    timing = {"threads": [1], "repeats": 1, "duration_s": 0.5}
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "memory",
                                       "params": {"op": "stream_triad", "blocks": [4096], **timing}})
    assert r.status_code == 422, r.text
    detail = r.json()["detail"][0]
    assert detail["loc"] == ["body", "params", "blocks"]
    assert "blocks does not apply to op stream_triad (only to op copy" in detail["msg"]
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "memory",
                                       "params": {"op": "copy", "sizes": [4096], **timing}})
    assert r.status_code == 422 and "sizes does not apply to op copy (only to op latency)" in r.text
    # an op list where one op uses it (a suite's memory item) is fine: each run gets what applies to it
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "memory",
                                       "params": {"op": ["copy", "stream_triad"], "blocks": [4096], **timing}})
    assert r.status_code == 201, r.text
    # each run stores (and every summary shows) only what applies to it: the STREAM run no blocks, neither run
    # the latency op's working-set sizes (the kernel's x-applies)
    copy, triad = (run["params"] for run in r.json()["runs"])
    assert copy["op"] == "copy" and copy["blocks"] == [4096] and "sizes" not in copy and "array_size" not in copy
    assert triad["op"] == "stream_triad" and not {"blocks", "buffer_bytes", "sizes"} & set(triad)
    assert triad["threads"] == [1] and "array_size" in triad
    # a run stored before that (blocks beside its STREAM op) is shown without them
    from app.jobs.models import Run

    old = session.get(Run, r.json()["runs"][1]["id"])
    old.params = {**old.params, "blocks": [4096], "sizes": [4096]}
    session.commit()
    shown = client.get(f"/api/runs/{old.id}").json()["params"]
    assert shown["op"] == "stream_triad" and not {"blocks", "sizes"} & set(shown)
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "memory",
                                       "params": {"op": "copy", "blocks": [4096], **timing}})
    assert r.status_code == 201, r.text
