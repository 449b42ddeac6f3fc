"""Issue 26 item 5: estimates are the typical time apart from the cap, and the run page hears the runner's phase
(a lease renewal carries it; the run shows it, and a change reaches the live stream)."""
from hostbench_common.reftools import likwid

from app.jobs import dispatch


def _started_run(client, session, runner, params, experiment="cpu"):
    host_id, headers = runner
    r = client.post("/api/jobs", json={"experiment": experiment, "host_ids": [host_id], "params": params})
    assert r.status_code == 201, r.text
    run_id = r.json()["runs"][0]["id"]
    dispatch.dispatch_host(session, host_id)
    client.get("/api/runner/work?wait_s=0", headers=headers)
    client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": {}}, headers=headers)
    return run_id, headers


def test_an_int32_run_with_reference_is_estimated_without_an_allowance(client, session, runner):
    """The issue's 16-s INT32 run showed "0 % · 10 min 14 s left": no tool measures INT32, so its estimate and its
    cap are its measuring time, no reference allowance."""
    host_id, _ = runner
    params = {"op": "int32", "threads": [1], "repeats": 3, "duration_s": 5, "warmup_s": 1, "reference": True}
    got = client.post("/api/jobs/estimate", json={"experiment": "cpu", "host_ids": [host_id], "params": params}).json()
    assert got == {"typical_s": 16, "cap_s": 16.0, "references": []}
    run_id, _ = _started_run(client, session, runner, params)
    run = client.get(f"/api/runs/{run_id}").json()
    assert run["expected_duration_s"] == 16.0 and run["typical_duration_s"] == 16


def test_a_job_estimate_names_its_reference_runs_and_their_typical_time(client, runner):
    host_id, _ = runner
    params = {"op": "fp32", "threads": [1, 2], "repeats": 1, "duration_s": 2, "warmup_s": 0, "reference": True}
    got = client.post("/api/jobs/estimate", json={"experiment": "cpu", "host_ids": [host_id], "params": params}).json()
    assert got["references"] == [
        {"tool": "likwid-bench", "what": f"likwid-bench peakflops_sp_avx512_fma, {t} threads", "typical_s": likwid.TYPICAL_S}
        for t in (1, 2)]
    assert got["typical_s"] == 4 + 2 * likwid.TYPICAL_S
    assert got["cap_s"] == 4 + 600.0  # the allowance: 300 s per thread count, a cap, not the estimate
    assert client.post("/api/jobs/estimate", json={"experiment": "cpu", "host_ids": [999999],
                                                   "params": params}).status_code == 404


def test_the_suite_estimate_on_the_hosts_picked(client, runner):
    host_id, _ = runner
    got = client.post("/api/suite-runs/estimate", json={"suite": "quick", "host_ids": [host_id]}).json()
    assert set(got) == {"typical_s", "cap_s", "per_host"} and got["per_host"] == {str(host_id): got["typical_s"]}
    assert 0 < got["typical_s"] <= got["cap_s"]
    assert client.post("/api/suite-runs/estimate", json={"suite": "quick", "host_ids": [999999]}).status_code == 404
    # bad input is a clear 4xx, never a 500
    assert client.post("/api/suite-runs/estimate", json={"suite": "quick", "host_ids": [host_id, host_id]}).status_code == 422
    assert client.post("/api/suite-runs/estimate", json={"suite": "quick", "host_ids": [host_id],
                                                         "peer_host_id": host_id}).status_code == 422
    assert client.post("/api/suite-runs/estimate", json={"suite": "nope", "host_ids": [host_id]}).status_code in (404, 422)


def test_a_lease_renewal_reports_the_phase_and_the_run_shows_it(client, session, runner):
    params = {"op": "fp64", "threads": [1], "repeats": 1, "duration_s": 1, "warmup_s": 0, "reference": True}
    run_id, headers = _started_run(client, session, runner, params)
    assert client.get(f"/api/runs/{run_id}").json()["phase"] is None
    phase = {"kind": "reference", "tool": "hpcc", "what": "HPL N = 4,032, 1 process", "index": 1, "of": 2,
             "started_at": 1795900000.5, "typical_s": 37.1, "cap_s": 600.0}
    r = client.post(f"/api/runner/runs/{run_id}/lease", json={"attempt": 1, "phase": phase}, headers=headers)
    assert r.status_code == 200, r.text
    assert client.get(f"/api/runs/{run_id}").json()["phase"] == phase
    # a renewal without a phase keeps the last one; a bad one is a 422, never stored
    assert client.post(f"/api/runner/runs/{run_id}/lease", json={"attempt": 1}, headers=headers).status_code == 200
    assert client.get(f"/api/runs/{run_id}").json()["phase"] == phase
    bad = {**phase, "kind": "dancing"}
    assert client.post(f"/api/runner/runs/{run_id}/lease", json={"attempt": 1, "phase": bad},
                       headers=headers).status_code == 422
    assert client.get(f"/api/runs/{run_id}").json()["phase"] == phase
    client.post(f"/api/runner/runs/{run_id}/finish", headers=headers,
                json={"attempt": 1, "status": "succeeded", "results": [
                    {"threads": 1, "repeat": 1, "value": 50.0, "unit": "GFLOP/s", "verified": True}]})
    assert client.get(f"/api/runs/{run_id}").json()["phase"] is None  # an ended run has no phase
