"""Bounds a shared lab needs (issue 12): finite numbers, ids in range, body and inventory sizes, a cap on a job's
duration, per-person quotas, sample seq bounds and sample retention. Each refusal is a clear 4xx, never a 500,
and nothing is stored."""
import json
import re

import pytest
from sqlalchemy import func, select

from app.core.bounds import MAX_BODY_BYTES, MAX_ID, MAX_INVENTORY_BYTES, MAX_SEQ
from app.core.config import get_settings
from app.jobs.models import Job, Run, Sample
from app.main import app

BIG = MAX_ID + 1  # 2^31


def _count(session, model) -> int:
    return session.scalar(select(func.count()).select_from(model)) or 0


def _json_raw(client, method, url, raw: str, headers=None):
    return client.request(method, url, content=raw.encode(), headers={"content-type": "application/json",
                                                                        **(headers or {})})


def _assert_422_names(r, *loc):
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]  # the body is valid JSON (a NaN echoed back used to make it a 500)
    assert any(d["loc"][:len(loc)] == list(loc) for d in detail), detail
    return detail


# -- finite numbers -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"])
def test_job_parameters_must_be_finite(client, session, runner, token):
    host_id, _ = runner
    raw = f'{{"host_ids": [{host_id}], "experiment": "cpu", "params": {{"threads": [1], "duration_s": {token}}}}}'
    _assert_422_names(_json_raw(client, "POST", "/api/jobs", raw), "body", "params", "duration_s")
    raw = f'{{"host_ids": [{host_id}], "experiment": "cpu", "params": {{"stable_cv": {token}}}}}'
    _assert_422_names(_json_raw(client, "POST", "/api/jobs", raw), "body", "params", "stable_cv")
    assert _count(session, Job) == 0


@pytest.mark.parametrize("token", ["NaN", "Infinity", "1e400"])
def test_peak_values_must_be_finite(client, runner, token):
    host_id, _ = runner
    r = _json_raw(client, "PUT", f"/api/hosts/{host_id}/peaks/cpu_fp64", f'{{"value": {token}}}')
    _assert_422_names(r, "body", "value")
    peak = client.get(f"/api/hosts/{host_id}").json()["peaks"]["cpu_fp64"]
    assert peak is None or peak["source"] != "user"


# The body CI's fuzzer sent (a NUL inside an inventory key) reached PostgreSQL and came back as a 500: a NUL or an
# unpaired surrogate is now stored as U+FFFD (app.core.body), in keys and values at any depth.
@pytest.mark.parametrize(("raw", "stored"), [
    ('{"inventory": {"a\\u0000b": 1}, "version": "0.1.0"}', {"a\ufffdb": 1}),
    ('{"inventory": {"cpu": {"model": "x\\u0000"}}, "version": "0.1.0"}', {"cpu": {"model": "x\ufffd"}}),
    ('{"inventory": {"cpu": ["\\ud800", 2.5]}, "version": "0.1.0"}', {"cpu": ["\ufffd", 2.5]}),
    ('{"inventory": {"note": "\\ud83d\\ude00"}, "version": "0.1.0"}', {"note": "\U0001f600"}),
])
def test_strings_postgresql_cannot_store_are_stored_as_the_replacement_character(client, runner, raw, stored):
    host_id, headers = runner
    r = _json_raw(client, "POST", "/api/runner/heartbeat", raw, headers)
    assert r.status_code == 200, r.text
    host = client.get(f"/api/hosts/{host_id}")
    assert host.status_code == 200, host.text
    assert host.json()["inventory"] == stored


@pytest.mark.parametrize("inventory", [
    {"cpu": ["\ufffd", 2.5]}, {"cpu": {"sockets": "x", "cores_per_socket": [2], "isa": 5, "max_mhz": "3000"}},
    {"cpu": {"vendor": "AuthenticAMD", "family": 25, "model_number": 1, "sockets": 1, "cores_per_socket": 2,
             "isa": ["avx2", "fma"], "fma_probe": {"isa": {"avx2": [1], "avx512": {"fma_units": "two"}}}}},
    {"memory": {"channels": True, "speed_mts": "4800"}, "cpu": None},
])
def test_a_malformed_inventory_leaves_peaks_unknown_not_a_500(client, runner, inventory):
    host_id, headers = runner
    r = client.post("/api/runner/heartbeat", json={"inventory": inventory, "version": "0.1.0"}, headers=headers)
    assert r.status_code == 200, r.text
    host = client.get(f"/api/hosts/{host_id}")
    assert host.status_code == 200, host.text
    assert host.json()["peaks"]["memory_bw"] is None
    assert client.get("/api/hosts").status_code == 200


def test_a_nul_in_a_job_field_is_not_a_500(client, session, runner):
    host_id, _ = runner
    raw = f'{{"host_ids": [{host_id}], "experiment": "cpu\\u0000", "params": {{"threads": [1]}}}}'
    r = _json_raw(client, "POST", "/api/jobs", raw)
    assert r.status_code == 422, r.text
    assert _count(session, Job) == 0


def _running(client, session, host_id, headers) -> int:
    from app.jobs import dispatch

    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu",
                                       "params": {"threads": [1], "repeats": 1, "duration_s": 1, "warmup_s": 0}})
    assert r.status_code == 201, r.text
    run_id = r.json()["runs"][0]["id"]
    dispatch.dispatch_host(session, host_id)
    assert client.get("/api/runner/work?wait_s=0", headers=headers).json()["run_id"] == run_id
    r = client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": {}}, headers=headers)
    assert r.status_code == 200, r.text
    return run_id


def _sample(seq, value="50.0"):
    return (f'{{"seq": {seq}, "t": 1700000000.5, "interval_s": 1.0, "threads": 1, "repeat": 1, "warmup": false, '
            f'"value": {value}, "unit": "GFLOP/s"}}')


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e400", "2E+308", "-1" + "0" * 250 + "e99",
                                   "1" + "0" * 320 + ".5"])
def test_runner_samples_must_be_finite(client, session, runner, token):
    host_id, headers = runner
    run_id = _running(client, session, host_id, headers)
    raw = f'{{"attempt": 1, "samples": [{_sample(0)}, {_sample(1, token)}]}}'
    r = _json_raw(client, "POST", f"/api/runner/runs/{run_id}/samples", raw, headers)
    _assert_422_names(r, "body", "samples", 1, "value")
    assert _count(session, Sample) == 0
    # the run stays readable, live stream and export included
    assert client.get(f"/api/runs/{run_id}").status_code == 200
    assert client.get(f"/api/runs/{run_id}/export?format=json").status_code == 200


def test_sample_seq_is_bounded(client, session, runner):
    host_id, headers = runner
    run_id = _running(client, session, host_id, headers)
    for seq in (10**12, MAX_SEQ + 1):
        r = _json_raw(client, "POST", f"/api/runner/runs/{run_id}/samples",
                      f'{{"attempt": 1, "samples": [{_sample(seq)}]}}', headers)
        _assert_422_names(r, "body", "samples", 0, "seq")
    r = _json_raw(client, "POST", f"/api/runner/runs/{run_id}/samples",
                  f'{{"attempt": 1, "samples": [{_sample(MAX_SEQ)}]}}', headers)
    assert r.status_code == 200, r.text
    assert _count(session, Sample) == 1


# -- ids ------------------------------------------------------------------------------------------------------
def _paths_with_ids():
    for path, ops in app.openapi()["paths"].items():
        if "_id}" in path:
            for method in ops:
                yield method.upper(), path


@pytest.mark.parametrize(("method", "path"), sorted(set(_paths_with_ids())))
def test_ids_beyond_an_integer_are_refused_in_every_path(client, runner, method, path, anon_client):
    host_id, runner_headers = runner
    url = path
    for name in ("run_id", "host_id", "user_id", "token_id"):
        url = url.replace("{" + name + "}", str(BIG))
    url = url.replace("{key}", "cpu_fp64")
    headers = runner_headers if path.startswith("/api/runner/") else {}
    body = {"attempt": 1, "kernel_info": {}, "samples": [], "status": "failed", "port": 1} \
        if path.startswith("/api/runner/") else {}
    r = client.request(method, url, json=body if method in ("POST", "PUT", "PATCH") else None, headers=headers)
    assert r.status_code in (404, 422), (method, url, r.status_code, r.text)
    r.json()


@pytest.mark.parametrize("query", [f"host_id={BIG}", f"job_id={BIG}", f"ids={BIG}", f"ids=1,{10**12 - 1}"])
def test_ids_beyond_an_integer_in_queries(client, runner, query):
    r = client.get(f"/api/runs?{query}")
    assert r.status_code in (200, 422), r.text
    if r.status_code == 200:  # ids that cannot exist match nothing: never "every run"
        assert r.json() == {"data": [], "count": 0, "count_more": False, "next_before_id": None}


def test_ids_beyond_an_integer_in_bodies(client, session, runner):
    host_id, headers = runner
    r = client.post("/api/jobs", json={"host_ids": [BIG], "experiment": "cpu"})
    _assert_422_names(r, "body", "cpu", "host_ids", 0)
    r = client.post("/api/jobs", json={"host_ids": [BIG, host_id], "experiment": "network_pair"})
    _assert_422_names(r, "body", "network_pair", "host_ids", 0)
    r = client.post("/api/runner/heartbeat", json={"run": {"run_id": BIG, "attempt": BIG}}, headers=headers)
    _assert_422_names(r, "body", "run")
    run_id = _running(client, session, host_id, headers)
    r = client.post(f"/api/runner/runs/{run_id}/lease", json={"attempt": BIG}, headers=headers)
    _assert_422_names(r, "body", "attempt")
    assert _count(session, Job) == 1


def test_every_bound_reaches_the_openapi_document_as_json_schema():
    """A bound declared after a validator lands in the document as "ge"/"le", which no client reads: the fuzzer
    then sends values the API refuses, and people see no limit in the form."""
    text = json.dumps(app.openapi())
    assert not re.findall(r'"(ge|le|gt|lt|multiple_of|min_length|max_length)":', text)


# -- sizes ----------------------------------------------------------------------------------------------------
def test_a_body_over_the_limit_is_refused_with_413(client, runner):
    big = b'{"host_ids": [1], "experiment": "cpu", "pad": "' + b"x" * MAX_BODY_BYTES + b'"}'
    r = client.post("/api/jobs", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413, r.text[:300]
    assert "limit" in r.json()["detail"]


def test_a_422_never_echoes_a_large_input(client, runner):
    host_id, _ = runner
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu",
                                       "params": {"op": "y" * 900_000, "threads": ["z" * 50_000]}})
    assert r.status_code == 422
    assert len(r.content) < 4096, len(r.content)
    assert "yyyyyyyyyy" not in r.text and "zzzzzzzzzz" not in r.text


def test_registration_inventory_is_capped(client, session):
    from app.hosts.service import create_registration_token

    token, _ = create_registration_token(session)
    inventory = {"cpu": {"model": "x"}, "nics": [{"name": f"veth{i}", "pad": "p" * 100} for i in range(3000)]}
    assert len(json.dumps(inventory)) > MAX_INVENTORY_BYTES
    r = client.post("/api/runners/register", json={"registration_token": token, "name": "fat", "hostname": "fat",
                                                   "inventory": inventory})
    detail = _assert_422_names(r, "body", "inventory")
    assert str(MAX_INVENTORY_BYTES) in detail[0]["msg"]
    r = client.post("/api/runners/register", json={"registration_token": token, "name": "ok", "hostname": "ok",
                                                   "inventory": {"cpu": {"model": "x"}}})
    assert r.status_code == 201, r.text  # the token was not spent by the refused call
    heartbeat = client.post("/api/runner/heartbeat", json={"inventory": inventory},
                            headers={"Authorization": f"Bearer {r.json()['runner_token']}"})
    _assert_422_names(heartbeat, "body", "inventory")


# -- a job's duration -----------------------------------------------------------------------------------------
def test_a_seven_year_cpu_job_is_refused_naming_params(client, session, runner):
    host_id, _ = runner
    params = {"threads": list(range(1, 65)), "repeats": 100, "duration_s": 3600, "warmup_s": 600,
              "stable_cv": 0.5, "max_repeats": 1000}
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu", "params": params})
    detail = _assert_422_names(r, "body", "params")
    assert detail[0]["type"] == "job_too_long" and "years" in detail[0]["msg"] and "limit" in detail[0]["msg"]
    assert _count(session, Job) == 0


def test_a_24_hour_trace_is_refused_naming_duration(client, session, runner):
    host_id, _ = runner
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu_trace",
                                       "params": {"duration_s": 86400}})
    _assert_422_names(r, "body", "params", "duration_s")
    limit = get_settings().max_job_duration_s
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu_trace",
                                       "params": {"duration_s": limit}})
    assert r.status_code == 201, r.text  # at the limit is fine
    assert _count(session, Job) == 1


# -- quotas ---------------------------------------------------------------------------------------------------
def test_per_person_quota_gives_429_with_retry_after(client, session, runner, monkeypatch):
    from tests.conftest import make_user

    host_id, _ = runner
    monkeypatch.setattr(get_settings(), "max_active_runs_per_user", 2)
    body = {"host_ids": [host_id], "experiment": "cpu", "params": {"threads": [1]}}
    assert client.post("/api/jobs", json=body).status_code == 201
    assert client.post("/api/jobs", json=body).status_code == 201
    r = client.post("/api/jobs", json=body)
    assert r.status_code == 429, r.text
    assert int(r.headers["Retry-After"]) >= 1
    assert "limit 2 per person" in r.json()["detail"]
    # the quota is per person: someone else may still queue
    other = make_user(session, "other-operator", "operator")
    assert client.post("/api/jobs", json=body, headers=other).status_code == 201
    # and a cancelled run frees its slot
    first = client.get("/api/runs").json()["data"][-1]["id"]
    assert client.post(f"/api/runs/{first}/cancel").status_code == 202
    assert client.post("/api/jobs", json=body).status_code == 201
    assert session.scalar(select(func.count()).select_from(Run).where(Run.status == "queued")) == 3


def test_server_wide_cap_gives_429_with_retry_after(client, runner, monkeypatch):
    host_id, _ = runner
    monkeypatch.setattr(get_settings(), "max_active_jobs", 1)
    body = {"host_ids": [host_id], "experiment": "cpu", "params": {"threads": [1]}}
    assert client.post("/api/jobs", json=body).status_code == 201
    r = client.post("/api/jobs", json=body)
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1, r.text


# -- retention ------------------------------------------------------------------------------------------------
def test_the_fast_path_never_misses_a_float_that_overflows():
    """app.core.body parses a body without a per-float check unless its bytes could hold a float beyond a
    double (_MAYBE_HUGE). Every literal that overflows must match it: 20,000 random JSON floats around the edge."""
    import math
    import random

    from app.core.body import _MAYBE_HUGE, parse_checked

    rng = random.Random(20261126)
    overflowing = 0
    for _ in range(20000):
        digits = str(rng.randint(1, 9)) + "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 260)))
        frac = "." + str(rng.randint(0, 99999)) if rng.random() < 0.5 else ""
        exp = rng.choice(["", f"e{rng.randint(-400, 400)}", f"E+{rng.randint(0, 400)}", f"e{rng.randint(0, 99):02d}"])
        text = rng.choice(["", "-"]) + digits + frac + exp
        if not frac and not exp:
            continue  # an integer: Python keeps it exact (the schemas' integer bounds refuse a huge one)
        if math.isinf(float(text)):
            overflowing += 1
            assert _MAYBE_HUGE.search(text.encode()), text
            checked = parse_checked(f'{{"v": {text}}}'.encode())
            assert checked is not None and checked[0] == [(["v"], text)]
    assert overflowing > 1000  # the sample reached the edge it is about
