"""Two real API processes on one PostgreSQL and one Redis (as `HOSTBENCH_API_WORKERS=2` or two compose
replicas run them): samples a runner uploads to one reach a live stream served by the other through Redis,
and live-stream slots are counted across both."""
import json
import os
import queue
import threading
import time
from contextlib import ExitStack

import httpx
import pytest

from app.hosts.service import create_registration_token
from app.jobs import dispatch
from tests.apiproc import api_process
from tests.conftest import ZEN4_INVENTORY, make_user


@pytest.fixture
def two_apis(tmp_path):
    env = dict(os.environ, HOSTBENCH_SSE_PER_USER="2", PYTHONUNBUFFERED="1")
    with ExitStack() as stack:
        # uvicorn waits for open streams to end when stopped; the tests close theirs
        yield [stack.enter_context(api_process(tmp_path / f"api{i}.log", env)) for i in range(2)]


def _events(url: str, headers: dict, out: queue.Queue, stop: threading.Event) -> None:
    """Read an SSE stream; put (event, data, received_at) on `out`."""
    with httpx.stream("GET", url, headers={**headers, "Accept": "text/event-stream"}, timeout=30) as r:
        out.put(("status", r.status_code, time.monotonic(), r))
        kind = None
        for line in r.iter_lines():
            if stop.is_set():
                return
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: ") and kind:
                out.put((kind, json.loads(line[6:]), time.monotonic()))


def _sample(seq: int) -> dict:
    return {"seq": seq, "t": float(seq), "interval_s": 1.0, "threads": 1, "repeat": 0, "warmup": False,
            "value": 40.0 + seq, "unit": "GFLOP/s", "op": "fp64"}


def test_samples_ingested_by_one_process_reach_streams_of_the_other(two_apis, session):
    a, b = two_apis
    admin = make_user(session, "procs-admin", "admin")
    viewer = make_user(session, "procs-viewer", "viewer")
    token, _ = create_registration_token(session)
    reg = httpx.post(f"{a}/api/runners/register", json={
        "registration_token": token, "name": "procs-host", "hostname": "procs.local", "version": "0",
        "inventory": ZEN4_INVENTORY, "labels": {}}).json()
    runner = {"Authorization": f"Bearer {reg['runner_token']}"}
    job = httpx.post(f"{a}/api/jobs", headers=admin, json={
        "host_ids": [reg["host_id"]], "experiment": "cpu_trace", "params": {"duration_s": 60}})
    assert job.status_code == 201, job.text
    run_id = job.json()["runs"][0]["id"]
    dispatch.dispatch_host(session, reg["host_id"])
    claim = httpx.get(f"{a}/api/runner/work?wait_s=0", headers=runner)
    assert claim.status_code == 200, claim.text
    attempt = claim.json()["attempt"]
    assert httpx.post(f"{a}/api/runner/runs/{run_id}/start", headers=runner,
                      json={"attempt": attempt, "kernel_info": {"clock_ghz": 3.0}}).status_code == 200

    out: queue.Queue = queue.Queue()
    stop = threading.Event()
    reader = threading.Thread(target=_events, args=(f"{b}/api/runs/{run_id}/events", viewer, out, stop),
                              daemon=True)
    reader.start()
    assert out.get(timeout=20)[:2] == ("status", 200)
    assert out.get(timeout=20)[0] == "run"  # the stream is open on B: what follows comes live
    time.sleep(0.5)
    sent = time.monotonic()
    ack = httpx.post(f"{a}/api/runner/runs/{run_id}/samples", headers=runner,
                     json={"attempt": attempt, "samples": [_sample(i) for i in range(5)]})
    assert ack.status_code == 200 and ack.json()["inserted"] == 5, ack.text
    got = []
    while len(got) < 5:
        kind, data, at = out.get(timeout=10)
        if kind == "sample":
            got.append((data["seq"], data["value"], at - sent))
    stop.set()
    assert [(s, v) for s, v, _ in got] == [(i, 40.0 + i) for i in range(5)]
    # through Redis, not the stream's safety re-read of PostgreSQL (every 15 s)
    assert max(lag for _, _, lag in got) < 5.0, got


def test_live_stream_slots_are_counted_across_processes(two_apis, session):
    a, b = two_apis
    admin = make_user(session, "slots-admin", "admin")
    viewer = make_user(session, "slots-viewer", "viewer")
    token, _ = create_registration_token(session)
    reg = httpx.post(f"{a}/api/runners/register", json={
        "registration_token": token, "name": "slots-host", "hostname": "slots.local", "version": "0",
        "inventory": ZEN4_INVENTORY, "labels": {}}).json()
    job = httpx.post(f"{a}/api/jobs", headers=admin, json={
        "host_ids": [reg["host_id"]], "experiment": "cpu_trace", "params": {"duration_s": 60}})
    run_id = job.json()["runs"][0]["id"]
    streams = []
    stop = threading.Event()
    for url in (a, b):  # the per-person limit is 2 (HOSTBENCH_SSE_PER_USER): one on each process
        out: queue.Queue = queue.Queue()
        threading.Thread(target=_events, args=(f"{url}/api/runs/{run_id}/events", viewer, out, stop),
                         daemon=True).start()
        first = out.get(timeout=20)
        assert first[:2] == ("status", 200)
        streams.append(first[3])
    third = httpx.get(f"{a}/api/runs/{run_id}/events", headers=viewer, timeout=10)
    assert third.status_code == 429, third.text
    assert int(third.headers["retry-after"]) >= 1
    other = make_user(session, "slots-viewer-2", "viewer")  # another person still gets one
    with httpx.stream("GET", f"{b}/api/runs/{run_id}/events", headers=other, timeout=10) as r:
        assert r.status_code == 200
    streams[0].close()  # close one: its slot comes back
    deadline = time.monotonic() + 30
    while True:
        with httpx.stream("GET", f"{a}/api/runs/{run_id}/events", headers=viewer, timeout=10) as r:
            if r.status_code == 200:
                break
        assert time.monotonic() < deadline, "the closed stream's slot was never given back"
        time.sleep(0.5)
    stop.set()
    for r in streams:
        r.close()
