"""Jobs take lists of ops: where a run kind has a fan_out parameter (op), a job may give a list; it fans out into
one run per (host, op), each run with one op and its own expected duration. The list's bounds are the table's."""
from hostbench_common.experiments import EXPERIMENTS

from app.experiments.registry import PARAMS

QUICK = {"threads": [1], "repeats": 1, "duration_s": 1, "warmup_s": 0}


def _runs(client, job):
    return client.get("/api/runs", params={"job_id": job["id"]}).json()["data"]


def test_a_list_of_ops_makes_one_run_per_host_and_op(client, runner):
    host_id, _ = runner
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu",
                                       "params": {**QUICK, "op": ["fp64", "int32"]}})
    assert r.status_code == 201, r.text
    runs = sorted(_runs(client, r.json()), key=lambda x: x["id"])
    assert [x["params"]["op"] for x in runs] == ["fp64", "int32"]
    assert [x["unit"] for x in runs] == ["GFLOP/s", "GIOP/s"]
    assert all(x["expected_duration_s"] == 1.0 and x["host_id"] == host_id for x in runs)


def test_one_op_still_makes_one_run(client, runner):
    host_id, _ = runner
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "memory",
                                       "params": {**QUICK, "op": "latency"}})
    assert r.status_code == 201, r.text
    [run] = _runs(client, r.json())
    assert run["params"]["op"] == "latency"


def test_an_empty_duplicated_or_unknown_list_is_a_422(client, runner):
    host_id, _ = runner
    for ops in ([], ["fp64", "fp64"], ["fp64", "avx9000"], ["fp64", "fp32", "int32", "fp64"]):
        r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu", "params": {"op": ops}})
        assert r.status_code == 422, (ops, r.text)
        assert any(d["loc"][:3] == ["body", "cpu", "params"] or "op" in d["loc"] for d in r.json()["detail"]), r.text
    assert client.get("/api/runs").json()["count"] == 0


def test_a_kernel_rule_holds_for_every_op_of_the_list(client, runner):
    """UDP carries at most 65507 bytes: a list with a UDP op refuses larger sizes, naming the field."""
    host_id, _ = runner
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "network",
                                       "params": {"op": ["tcp_stream", "udp_stream"], "sizes": [70000]}})
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"][-1] == "sizes"
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "network",
                                       "params": {"op": ["tcp_stream", "tcp_rr"], "sizes": [70000], **QUICK}})
    assert r.status_code == 422  # a network job has no threads: extra fields are refused
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "network", "params": {
        "op": ["tcp_stream", "tcp_rr"], "sizes": [70000], "repeats": 1, "duration_s": 1, "warmup_s": 0}})
    assert r.status_code == 201, r.text


def test_a_two_host_job_takes_one_op(client, runner):
    host_id, _ = runner
    r = client.post("/api/jobs", json={"host_ids": [host_id, host_id + 1], "experiment": "network_pair",
                                       "params": {"op": ["tcp_stream", "tcp_rr"]}})
    assert r.status_code == 422


def test_the_job_duration_limit_counts_every_op(client, runner):
    host_id, _ = runner
    each = {"threads": [1], "repeats": 1, "duration_s": 3600, "warmup_s": 0}
    assert client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu_trace",
                                          "params": {"duration_s": 30000, "op": "fp64"}}).status_code == 201
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu_trace",
                                       "params": {"duration_s": 30000, "op": ["fp64", "fp32"]}})
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "job_too_long", r.text
    assert EXPERIMENTS["cpu"].expected_duration({**each, "op": ["fp64", "fp32", "int32"]}) == 3 * 3600


def test_the_list_and_its_bounds_are_published(client):
    data = {e["kind"]: e for e in client.get("/api/experiments").json()["data"]}
    assert data["cpu"]["duration"]["fan_out"] == "op"
    assert data["network_pair"]["duration"]["fan_out"] is None
    assert data["disk"]["duration"]["fan_out"] is None  # its kernel loops over its own ops list
    one, many = data["memory"]["parameters"]["properties"]["op"]["anyOf"]
    assert many["type"] == "array" and many["minItems"] == 1 and many["maxItems"] == len(one["enum"])
    assert many["items"]["enum"] == one["enum"]
    assert PARAMS["memory"]().op == "copy"  # the default is one op
