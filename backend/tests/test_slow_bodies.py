"""Slow request bodies hold no admission slot (issue 27, item 1), on real processes: the API's two kinds of
process (uvicorn), Celery, a runner daemon and the C kernel, over real PostgreSQL and Redis.

Fifty connections on each port send a request's headers (Content-Length: 100) and then nothing, and are opened
again whenever the server closes one. Before the fix a dozen of them held every slot: lease renewals got 503 and
the run was failed ("runner went silent"); sign-in, health and reads got 503. Now the run succeeds at attempt 1
and every read and sign-in meanwhile is answered."""
import os
import socket
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from hostbench_stack.stack import Stack

from tests.conftest import fresh_db

HELD = 50  # slow connections held on each port
LEASE_S = 6.0


class SlowClients:
    """HELD connections to one port, each sending one of `requests`' headers and no body; reopened 0.5 s after
    the server closes one. Counts what the server answered them with."""

    def __init__(self, url: str, requests: list[str]):
        u = urlsplit(url)
        self.addr = (u.hostname or "127.0.0.1", u.port or 80)
        self.heads = [f"POST {path} HTTP/1.1\r\nHost: {u.netloc}\r\nContent-Type: application/json\r\n"
                      f"Content-Length: 100\r\n\r\n".encode() for path in requests]
        self.answers: dict[str, int] = {}
        self.opened = 0
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._hold, args=(i,), daemon=True) for i in range(HELD)]

    def __enter__(self) -> "SlowClients":
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(5)

    def held(self) -> int:
        return sum(t.is_alive() for t in self.threads)

    def _hold(self, i: int) -> None:
        while not self.stop.is_set():
            try:
                with socket.create_connection(self.addr, timeout=2) as s:
                    s.sendall(self.heads[i % len(self.heads)])
                    self.opened += 1
                    s.settimeout(0.5)
                    while not self.stop.is_set():
                        try:
                            got = s.recv(200)
                        except TimeoutError:
                            continue
                        status = got.split(b" ", 2)[1].decode() if got.startswith(b"HTTP/") else "closed"
                        self.answers[status] = self.answers.get(status, 0) + 1
                        break
            except OSError:
                pass
            self.stop.wait(0.5)


@pytest.fixture(scope="module")
def stack():
    state = Path(tempfile.mkdtemp(prefix="hb-slow-", dir=os.environ.get("HOSTBENCH_TEST_STATE")))
    s = Stack(state, database_url=fresh_db("hostbench_slow"), redis_url=os.environ["REDIS_URL"],
              runner_name="slow-host", extra_env={"LEASE_S": str(LEASE_S)})
    s.start()
    yield s
    s.stop()


def test_slow_bodies_on_both_ports_neither_fail_a_run_nor_refuse_reads(stack):
    url, control = stack.url, stack.control_url
    admin = stack.admin_headers()
    stack.create_user("slow-reader", "viewer", "reader password 1")
    host_id = httpx.get(f"{url}/api/hosts", headers=admin, timeout=10).json()["data"][0]["id"]
    reader = httpx.Client(base_url=url, timeout=10)
    assert reader.post("/api/auth/login", json={"name": "slow-reader", "password": "reader password 1"}
                       ).status_code == 200
    # the operator and a sign-in come from another address than the slow connections: from theirs, at most
    # BODIES_PER_ADDRESS bodies are read at once (a GET has none)
    elsewhere = httpx.Client(base_url=url, timeout=10, transport=httpx.HTTPTransport(local_address="127.0.0.2"))

    slow_paths = ["/api/runner/runs/1/lease", "/api/auth/login", "/api/runners/register"]
    refused: list[str] = []
    with SlowClients(url, slow_paths) as dash, SlowClients(control, slow_paths) as ctl:
        time.sleep(2)  # every slow connection open before the run starts
        assert dash.held() == HELD and ctl.held() == HELD
        r = elsewhere.post("/api/jobs", headers=admin, json={
            "host_ids": [host_id], "experiment": "cpu_trace", "params": {"op": "fp32", "threads": 1,
                                                                          "duration_s": 3 * LEASE_S}})
        assert r.status_code == 201, r.text
        run_id = r.json()["runs"][0]["id"]
        reads = 0
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            for path in ("/api/health", "/api/hosts", f"/api/runs/{run_id}"):
                t0 = time.monotonic()
                got = reader.get(path)
                reads += 1
                if got.status_code != 200 or time.monotonic() - t0 > 5:
                    refused.append(f"GET {path}: {got.status_code} in {time.monotonic() - t0:.1f} s {got.text[:100]}")
            if reads % 15 == 0:
                signed = elsewhere.post("/api/auth/login", json={"name": "slow-reader", "password": "reader password 1"})
                if signed.status_code != 200:
                    refused.append(f"sign-in: {signed.status_code} {signed.text[:100]}")
            run = reader.get(f"/api/runs/{run_id}").json()
            if run["status"] in ("succeeded", "failed", "untrusted", "cancelled"):
                break
            time.sleep(0.3)
        assert dash.held() == HELD and ctl.held() == HELD
        print(f"slow connections opened: dashboard {dash.opened} {dash.answers}, control {ctl.opened} {ctl.answers}; "
              f"{reads} reads")
    assert run["status"] == "succeeded" and run["attempt"] == 1, (run["status"], run["status_reason"])
    assert not refused, refused[:10]
    # the slow ones were cut off or refused, never let in: 408 (too slow), 429 (too many from one address), 401
    # (a runner route without a runner's credential)
    assert set(dash.answers) <= {"408", "429", "401"} and set(ctl.answers) <= {"408", "429", "401"}, (
        dash.answers, ctl.answers)
    assert dash.answers.get("408", 0) > 0  # the sign-ins' bodies that never came were timed out
