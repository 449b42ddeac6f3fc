"""The runner-facing API: claim, start, idempotent ingest, leases, stale attempts, finish and results."""
from datetime import timedelta

from sqlalchemy import func, select, update

from app.core.db import utcnow
from app.jobs import dispatch
from app.jobs.models import Run, Sample, ServerMark


def _job(client, host_id, **params):
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu", "params": params})
    assert r.status_code == 201, r.text
    return r.json()["runs"][0]["id"]


def _claim(client, session, host_id, headers):
    dispatch.dispatch_host(session, host_id)
    r = client.get("/api/runner/work?wait_s=0", headers=headers)
    assert r.status_code == 200, r.text
    return r.json()


def _sample(seq, value=50.0, threads=1, repeat=1):
    return {"seq": seq, "t": 1.7e9 + seq, "interval_s": 1.0, "threads": threads, "repeat": repeat,
            "warmup": False, "value": value, "unit": "GFLOP/s"}


KERNEL_INFO = {"type": "start", "kernel": "cpu", "isa": "avx512", "clock_ghz": 3.65}


def test_work_is_empty_until_dispatched(client, session, runner):
    host_id, headers = runner
    _job(client, host_id)
    assert client.get("/api/runner/work?wait_s=0", headers=headers).status_code == 204
    a = _claim(client, session, host_id, headers)
    assert a["attempt"] == 1
    assert a["experiment"] == "cpu"
    assert a["deadline_s"] > a["params"]["repeats"] * a["params"]["duration_s"]


def test_one_benchmark_per_host(client, session, runner):
    host_id, headers = runner
    first, second = _job(client, host_id), _job(client, host_id)
    assert dispatch.dispatch_host(session, host_id) == first
    assert dispatch.dispatch_host(session, host_id) is None
    assert session.get(Run, second).status == "queued"


def test_ingest_is_idempotent_and_refuses_stale_attempts(client, session, runner):
    host_id, headers = runner
    run_id = _job(client, host_id, threads=[1], repeats=1, duration_s=1, warmup_s=0)
    a = _claim(client, session, host_id, headers)
    assert client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": KERNEL_INFO},
                       headers=headers).status_code == 200
    batch = {"attempt": 1, "samples": [_sample(0), _sample(1), _sample(2)]}
    r1 = client.post(f"/api/runner/runs/{run_id}/samples", json=batch, headers=headers)
    r2 = client.post(f"/api/runner/runs/{run_id}/samples", json=batch, headers=headers)
    assert r1.json() == {"inserted": 3, "max_seq": 2, "conflicts": []}
    assert r2.json() == {"inserted": 0, "max_seq": 2, "conflicts": []}
    assert session.scalar(select(func.count()).select_from(Sample)) == 3
    # seq 1 resent with another value: refused and named, the stored one stays; seq 3 is new and kept
    changed = {"attempt": 1, "samples": [{**_sample(1), "value": _sample(1)["value"] + 1}, _sample(3)]}
    r3 = client.post(f"/api/runner/runs/{run_id}/samples", json=changed, headers=headers)
    assert r3.status_code == 200 and r3.json() == {"inserted": 1, "max_seq": 3, "conflicts": [1]}
    stored = session.scalar(select(Sample.value).where(Sample.run_id == run_id, Sample.seq == 1))
    assert stored == _sample(1)["value"]
    assert session.scalar(select(func.count()).select_from(Sample)) == 4
    stale = client.post(f"/api/runner/runs/{run_id}/samples", json={"attempt": 0, "samples": [_sample(4)]},
                        headers=headers)
    assert stale.status_code == 422  # attempts start at 1
    stale = client.post(f"/api/runner/runs/{run_id}/lease", json={"attempt": a["attempt"] + 1}, headers=headers)
    assert stale.status_code == 409
    assert "stale" in stale.json()["detail"]


def test_reclaim_bumps_attempt_and_old_attempt_gets_409(client, session, runner):
    host_id, headers = runner
    run_id = _job(client, host_id)
    assert _claim(client, session, host_id, headers)["attempt"] == 1
    again = client.get("/api/runner/work?wait_s=0", headers=headers).json()  # the first answer was lost
    assert again["attempt"] == 2
    r = client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": {}}, headers=headers)
    assert r.status_code == 409


def test_finish_computes_statistics_peak_and_efficiency(client, session, runner):
    host_id, headers = runner
    run_id = _job(client, host_id, threads=[1, 2], repeats=3, duration_s=1, warmup_s=0)
    _claim(client, session, host_id, headers)
    client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": KERNEL_INFO}, headers=headers)
    results = [{"threads": t, "repeat": i + 1, "value": v, "unit": "GFLOP/s", "verified": True}
               for t, vals in ((1, [56.0, 57.0, 58.0]), (2, [110.0, 112.0, 114.0])) for i, v in enumerate(vals)]
    r = client.post(f"/api/runner/runs/{run_id}/finish",
                    json={"attempt": 1, "status": "succeeded", "results": results}, headers=headers)
    assert r.status_code == 200, r.text
    run = client.get(f"/api/runs/{run_id}").json()
    assert run["status"] == "succeeded"
    one, two = run["result"]["rows"]
    assert (one["threads"], one["n"], one["mean"], one["stddev"]) == (1, 3, 57.0, 1.0)
    # Zen 4: 2 FMA pipes x 4 fp64 lanes (256-bit datapath) x 2 = 16 FLOP/cycle at the measured 3.65 GHz
    assert one["peak"]["value"] == 1 * 3.65 * 16
    assert two["peak"]["value"] == 2 * 3.65 * 16
    assert abs(one["efficiency"] - 57.0 / 58.4) < 1e-9
    assert one["valid"] and two["valid"]
    again = client.post(f"/api/runner/runs/{run_id}/finish",
                        json={"attempt": 1, "status": "failed", "results": []}, headers=headers)
    assert again.status_code == 200
    assert client.get(f"/api/runs/{run_id}").json()["status"] == "succeeded"  # idempotent


def test_result_above_peak_is_untrusted_not_a_triumph(client, session, runner):
    host_id, headers = runner
    run_id = _job(client, host_id, threads=[1], repeats=1, duration_s=1, warmup_s=0)
    _claim(client, session, host_id, headers)
    client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": KERNEL_INFO}, headers=headers)
    client.post(f"/api/runner/runs/{run_id}/finish", headers=headers, json={
        "attempt": 1, "status": "succeeded",
        "results": [{"threads": 1, "repeat": 1, "value": 90.0, "unit": "GFLOP/s", "verified": True}]})
    run = client.get(f"/api/runs/{run_id}").json()
    assert run["status"] == "untrusted"
    row = run["result"]["rows"][0]
    assert row["valid"] is False
    assert "above the theoretical peak 58.40" in row["invalid_reason"]


def test_silent_runner_fails_the_run(client, session, runner):
    host_id, headers = runner
    run_id = _job(client, host_id)
    _claim(client, session, host_id, headers)
    client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": KERNEL_INFO}, headers=headers)
    dispatch.reconcile(session)  # the reconciler is watching (no gap since its last pass)
    run = session.get(Run, run_id)
    run.lease_expires_at = utcnow() - timedelta(seconds=1)
    session.commit()
    assert dispatch.reconcile(session)["failed"] == 1
    session.expire_all()
    run = session.get(Run, run_id)
    assert run.status == "failed"
    assert run.status_reason.startswith("runner went silent")
    r = client.post(f"/api/runner/runs/{run_id}/lease", json={"attempt": 1}, headers=headers)
    assert r.status_code == 409  # the runner learns to stop its kernel


def test_a_lease_that_ran_out_while_the_server_was_away_gets_a_fresh_term(client, session, runner):
    """PostgreSQL (or the worker, or beat) was gone for a minute: no renewal could land, so the first pass of the
    reconciler after it renews every running lease instead of failing the runs; the runner's next renewal works."""
    host_id, headers = runner
    run_id = _job(client, host_id)
    _claim(client, session, host_id, headers)
    client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": KERNEL_INFO}, headers=headers)
    dispatch.reconcile(session)
    session.execute(update(ServerMark).values(at=utcnow() - timedelta(seconds=60)))  # the last pass, a minute ago
    run = session.get(Run, run_id)
    run.lease_expires_at = utcnow() - timedelta(seconds=20)
    session.commit()
    result = dispatch.reconcile(session)
    assert result["failed"] == 0 and result["renewed"] == 1, result
    session.expire_all()
    run = session.get(Run, run_id)
    assert run.status == "running" and run.lease_expires_at > utcnow()
    assert client.post(f"/api/runner/runs/{run_id}/lease", json={"attempt": 1}, headers=headers).status_code == 200
    # and with the reconciler watching again, a lease that runs out fails the run as before
    run.lease_expires_at = utcnow() - timedelta(seconds=1)
    session.commit()
    assert dispatch.reconcile(session) == {"failed": 1, "dispatched": 0, "renewed": 0}


def test_no_lease_is_failed_while_no_api_process_is_up(client, session, runner):
    """Every API process was down (killed, upgrading): no runner could renew through one, so the reconciler (beat's,
    still running) keeps running leases instead of failing the runs as "runner went silent"; a lease that runs out
    while an API is up fails as before. chaos's api-kill scenario shows it end to end."""
    host_id, headers = runner
    run_id = _job(client, host_id)
    _claim(client, session, host_id, headers)
    client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": KERNEL_INFO}, headers=headers)
    dispatch.reconcile(session)
    dispatch.mark(session, "api", utcnow() - timedelta(seconds=30))  # the last API process marked 30 s ago
    run = session.get(Run, run_id)
    run.lease_expires_at = utcnow() - timedelta(seconds=5)
    session.commit()
    result = dispatch.reconcile(session)
    assert result["failed"] == 0 and result["renewed"] == 1, result
    session.expire_all()
    assert session.get(Run, run_id).status == "running"
    dispatch.mark(session, "api")  # an API process is back
    run = session.get(Run, run_id)
    run.lease_expires_at = utcnow() - timedelta(seconds=1)
    session.commit()
    assert dispatch.reconcile(session)["failed"] == 1


def test_cancel_stops_the_runner_at_its_next_lease(client, session, runner):
    host_id, headers = runner
    run_id = _job(client, host_id)
    _claim(client, session, host_id, headers)
    client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": KERNEL_INFO}, headers=headers)
    assert client.post(f"/api/runs/{run_id}/cancel").json()["status"] == "cancelled"
    r = client.post(f"/api/runner/runs/{run_id}/lease", json={"attempt": 1}, headers=headers)
    assert r.status_code == 409
    assert "cancelled" in r.json()["detail"]


def test_reconciler_redispatches_a_run_whose_doorbell_was_lost(client, session, runner):
    host_id, headers = runner
    run_id = _job(client, host_id)
    run = session.get(Run, run_id)
    run.created_at = utcnow() - timedelta(seconds=60)
    session.commit()
    assert dispatch.reconcile(session)["dispatched"] == 1
    assert client.get("/api/runner/work?wait_s=0", headers=headers).json()["run_id"] == run_id


def test_events_stream_sends_backlog_then_end_and_resumes_by_seq(client, session, runner):
    host_id, headers = runner
    run_id = _job(client, host_id, threads=[1], repeats=1, duration_s=1, warmup_s=0)
    _claim(client, session, host_id, headers)
    client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": KERNEL_INFO}, headers=headers)
    client.post(f"/api/runner/runs/{run_id}/samples", headers=headers,
                json={"attempt": 1, "samples": [_sample(i) for i in range(5)]})
    client.post(f"/api/runner/runs/{run_id}/finish", headers=headers, json={
        "attempt": 1, "status": "succeeded",
        "results": [{"threads": 1, "repeat": 1, "value": 50.0, "unit": "GFLOP/s", "verified": True}]})

    def ids(extra_headers):
        with client.stream("GET", f"/api/runs/{run_id}/events", headers=extra_headers) as r:
            assert r.status_code == 200
            body = "".join(r.iter_text())
        return [int(line[4:]) for line in body.splitlines() if line.startswith("id: ")], body

    seqs, body = ids({})
    assert seqs == [0, 1, 2, 3, 4]
    assert "event: end" in body
    seqs, _ = ids({"Last-Event-ID": "2"})
    assert seqs == [3, 4]


def test_events_stream_refuses_foreign_origin(client, runner):
    host_id, _ = runner
    run_id = _job(client, host_id)
    r = client.get(f"/api/runs/{run_id}/events", headers={"Origin": "https://evil.example"})
    assert r.status_code == 403


def test_one_reconciler_pass_at_a_time_and_not_twice_in_half_a_period(client, session, runner):
    """reconcile_exclusive (what beat's task and every API process call): skipped while another pass holds the
    lock or one just finished, else one pass that fails the silent run."""
    from sqlalchemy import create_engine

    host_id, headers = runner
    run_id = _job(client, host_id)
    _claim(client, session, host_id, headers)
    client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": KERNEL_INFO}, headers=headers)
    dispatch.reconcile(session)  # a fresh mark: the next pass would be too soon
    session.get(Run, run_id).lease_expires_at = utcnow() - timedelta(seconds=1)
    session.commit()
    assert dispatch.reconcile_exclusive() is None  # a pass finished under half a period ago
    session.execute(update(ServerMark).values(at=utcnow() - timedelta(seconds=4)))
    session.commit()
    other = create_engine(session.get_bind().url).connect()  # another process in the middle of a pass
    try:
        assert other.scalar(select(func.pg_try_advisory_lock(dispatch.RECONCILE_LOCK))) is True
        assert dispatch.reconcile_exclusive() is None
        other.scalar(select(func.pg_advisory_unlock(dispatch.RECONCILE_LOCK)))
    finally:
        other.close()
    assert dispatch.reconcile_exclusive() == {"failed": 1, "dispatched": 0, "renewed": 0}
    session.expire_all()
    assert session.get(Run, run_id).status == "failed"


def test_a_host_has_its_address_from_registration(session, admin_headers):
    """A two-host job can use a host's address before its first heartbeat: it is recorded from the registration
    request (the fleet's browser test found a host 'online' with its address 'not known yet' while its runner was
    still starting)."""
    from fastapi.testclient import TestClient

    from app.hosts.service import create_registration_token
    from app.main import app

    token, _ = create_registration_token(session)
    with TestClient(app, client=("10.9.8.7", 40000)) as c:
        r = c.post("/api/runners/register", json={"registration_token": token, "name": "addr-host",
                                                  "hostname": "addr-host.local", "inventory": {}})
        assert r.status_code == 201, r.text
        host = c.get(f"/api/hosts/{r.json()['host_id']}", headers=admin_headers).json()
    assert host["address"] == "10.9.8.7"


def test_a_lost_doorbell_is_rung_again_after_one_reconcile_period(client, session, runner):
    """Unless set, redispatch_after is the reconcile period: a run queued for less than that is left to its
    doorbell; one queued longer is dispatched by the reconciler."""
    from app.core.config import get_settings

    s = get_settings()
    assert s.redispatch_after_s is None and s.redispatch_after == s.reconcile_s
    host_id, headers = runner
    run_id = _job(client, host_id)
    run = session.get(Run, run_id)
    run.created_at = utcnow() - timedelta(seconds=s.reconcile_s * 0.5)
    session.commit()
    assert dispatch.reconcile(session)["dispatched"] == 0  # younger than a period: the doorbell's
    run = session.get(Run, run_id)
    run.created_at = utcnow() - timedelta(seconds=s.reconcile_s * 1.2)
    session.commit()
    assert dispatch.reconcile(session)["dispatched"] == 1


def test_a_run_cancelled_while_it_is_being_dispatched_stays_cancelled(client, session, runner):
    """A cancel holding the run's row commits while a dispatch reads the host's queue: the dispatch must not
    write the run back as "dispatched" (found in a full suite cancelled during its first minute: the runner then
    claimed the run, was refused at start, and claimed it again every 3 s)."""
    import threading
    import time

    from app.core.db import get_sessionmaker

    host_id, headers = runner
    run_id = _job(client, host_id)
    with get_sessionmaker()() as canceller:
        run = canceller.scalar(select(Run).where(Run.id == run_id).with_for_update())
        run.cancel_requested, run.status, run.status_reason = True, "cancelled", "cancelled by test"
        canceller.flush()  # the row is locked and changed, not yet committed
        got: list = []
        with get_sessionmaker()() as dispatcher:
            t = threading.Thread(target=lambda: got.append(dispatch.dispatch_host(dispatcher, host_id)))
            t.start()
            time.sleep(0.5)
            canceller.commit()
            t.join(10)
    assert got == [None]
    session.expire_all()
    assert session.get(Run, run_id).status == "cancelled"
    assert client.get("/api/runner/work?wait_s=0", headers=headers).status_code == 204


def test_a_dispatched_run_with_a_cancel_is_never_handed_out(client, session, runner):
    host_id, headers = runner
    run_id = _job(client, host_id)
    assert dispatch.dispatch_host(session, host_id) == run_id
    session.execute(update(Run).where(Run.id == run_id).values(cancel_requested=True, cancelled_by="someone"))
    session.commit()
    assert client.get("/api/runner/work?wait_s=0", headers=headers).status_code == 204
    session.expire_all()
    run = session.get(Run, run_id)
    assert (run.status, run.status_reason) == ("cancelled", "cancelled by someone")


def test_a_rotated_credential_uploads_and_renews_and_the_old_one_then_cannot(client, session, runner):
    """The runners' statements match the current credential only; the first call with a rotated one takes the full
    path, which completes the rotation, and is then served (app.runner_api.fast). Another host's run, an unknown
    run and a wrong credential are each refused with their own status, and nothing is stored for them."""
    host_id, old = runner
    run_id = _job(client, host_id, threads=[1], repeats=1, duration_s=1, warmup_s=0)
    _claim(client, session, host_id, old)
    assert client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": KERNEL_INFO},
                       headers=old).status_code == 200
    client.post(f"/api/hosts/{host_id}/rotate-credential")
    new_token = client.post("/api/runner/credential/rotate", headers=old).json()["runner_token"]
    new = {"Authorization": f"Bearer {new_token}"}
    r = client.post(f"/api/runner/runs/{run_id}/samples", json={"attempt": 1, "samples": [_sample(0)]}, headers=new)
    assert r.status_code == 200 and r.json() == {"inserted": 1, "max_seq": 0, "conflicts": []}, r.text
    r = client.post(f"/api/runner/runs/{run_id}/lease", json={"attempt": 1}, headers=new)
    assert r.status_code == 200 and r.json()["lease_expires_at"] > utcnow().timestamp(), r.text
    for path, body in ((f"/api/runner/runs/{run_id}/samples", {"attempt": 1, "samples": [_sample(1)]}),
                       (f"/api/runner/runs/{run_id}/lease", {"attempt": 1})):
        assert client.post(path, json=body, headers=old).status_code == 401  # retired by the new one's first use
        assert client.post(path, json=body, headers={"Authorization": "Bearer hbrun_" + "x" * 43}).status_code == 401
        assert client.post(path.replace(f"/{run_id}/", f"/{run_id + 10**6}/"), json=body,
                           headers=new).status_code == 404
    assert session.scalar(select(func.count()).select_from(Sample).where(Sample.run_id == run_id)) == 1
