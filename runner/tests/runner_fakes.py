"""Test doubles of the runner tests: fixture paths, a fake kernel binary and a tiny fake server.

The fake server implements only the runner-facing endpoints of docs/api.md and records what it
got; it is the runner's own test double. The real end-to-end test runs against the real backend.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from hostbench_runner.daemon import Daemon, State

FIXTURES = Path(__file__).parent / "fixtures"
# real outputs of the reference tools, the parser tests' fixtures (common/tests/fixtures/reftools/README.md)
REFTOOLS = Path(__file__).resolve().parents[2] / "common" / "tests" / "fixtures" / "reftools"
DESCRIBE = json.loads((FIXTURES / "kernel_cpu_describe.json").read_text())


# --- fake kernel ---------------------------------------------------------------------------

FAKE_KERNEL = r'''
import json, os, signal, sys, time
MODE = {mode!r}
DESCRIBE = {describe!r}
LOG = {log!r}

def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()

args = sys.argv[1:]
if args == ["--version"]:
    print(json.dumps({{"version": "fake-1.0", "compiler": "python"}}))
    sys.exit(0)
if len(args) == 2 and args[1] == "--describe":
    print(DESCRIBE)
    sys.exit(0)
with open(LOG, "a") as fh:
    fh.write(json.dumps({{"argv": args, "cwd": os.getcwd(), "pid": os.getpid(),
                         "env_token": os.environ.get("HOSTBENCH_REGISTRATION_TOKEN")}}) + "\n")

def start():
    out({{"v": 1, "type": "start", "kernel": "cpu", "params": {{"op": "fp64"}}, "unit": "GFLOP/s",
         "isa": "avx2", "t": time.time()}})

def sample(seq, repeat=1):
    out({{"v": 1, "type": "sample", "seq": seq, "t": time.time(), "interval_s": 1.0, "threads": 1,
         "repeat": repeat, "warmup": repeat == 0, "value": 10.0 + seq, "unit": "GFLOP/s", "op": "fp64"}})

def result(repeat):
    out({{"v": 1, "type": "result", "threads": 1, "repeat": repeat, "value": 11.0, "unit": "GFLOP/s",
         "work": 1000, "seconds": 1.0, "verified": True, "op": "fp64"}})

if MODE in ("ok", "untrusted"):
    start()
    sample(0, repeat=0)
    for seq in range(1, 5):
        sample(seq)
        time.sleep(0.01)
    result(1)
    if MODE == "ok":
        out({{"v": 1, "type": "end", "status": "ok", "reason": None, "samples": 5, "t": time.time()}})
        sys.exit(0)
    out({{"v": 1, "type": "end", "status": "untrusted", "reason": "checksum mismatch in thread 0", "samples": 5, "t": time.time()}})
    sys.exit(4)
elif MODE == "garbage":
    start(); sample(0)
    print("Segmentation fault? no, just text", flush=True)
    time.sleep(30)
elif MODE == "share_above_one":  # a result figure outside the range its kernel declares (cpu_share 0..1)
    start(); sample(0)
    out({{"v": 1, "type": "result", "threads": 1, "repeat": 1, "value": 11.0, "unit": "GFLOP/s",
         "work": 1000, "seconds": 1.0, "verified": True, "op": "fp64", "cpu_share": 1.5}})
    out({{"v": 1, "type": "end", "status": "ok", "reason": None, "samples": 1, "t": time.time()}})
    sys.exit(0)
elif MODE == "bad_version":
    out({{"v": 2, "type": "start", "kernel": "cpu", "params": {{}}, "unit": "GFLOP/s"}})
    sys.exit(0)
elif MODE == "crash":
    start(); sample(0)
    sys.stderr.write("fake kernel: about to crash\n"); sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGSEGV)
elif MODE == "exit1":
    start(); sample(0)
    sys.stderr.write("fake kernel: internal failure\n")
    sys.exit(1)
elif MODE == "no_end":
    start(); sample(0); sample(1)
    sys.exit(0)
elif MODE == "bad_param":
    out({{"v": 1, "type": "error", "code": "bad_param", "message": "threads: 999 is above the maximum 256"}})
    sys.exit(2)
elif MODE == "hang":
    start(); sample(0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # make the runner escalate to SIGKILL
    while True:
        time.sleep(1)
elif MODE == "slow":
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    start()
    seq = 0
    while not stop and seq < 2000:
        sample(seq); seq += 1
        time.sleep(0.05)
    sys.exit(143 if stop else 0)
'''


def kernel_calls(kernel_bin: Path) -> list[dict[str, Any]]:
    log = kernel_bin.with_name(kernel_bin.name + ".log")
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


# --- fake server ---------------------------------------------------------------------------


class FakeServer:
    registration_token = "reg-token-ok"
    runner_token = "runner-token-secret"

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str, Any]] = []
        self.work: queue.Queue[dict[str, Any]] = queue.Queue()
        self.samples: dict[tuple[str, int], dict[int, dict[str, Any]]] = {}
        self.sample_posts = 0
        self.starts: list[tuple[str, dict[str, Any]]] = []
        self.finishes: list[tuple[str, dict[str, Any]]] = []
        self.closes: list[tuple[str, dict[str, Any]]] = []  # `closed`: no finish comes, every sample is sent
        self.heartbeats: list[dict[str, Any]] = []
        self.leases: list[tuple[str, dict[str, Any]]] = []
        self.listenings: list[tuple[str, dict[str, Any]]] = []
        self.registrations: list[dict[str, Any]] = []
        # knobs
        self.revoked = False
        # Credential rotation as the real server does it: `rotate` asks at the next heartbeat; the rotate call
        # hands out `rotated_token`, and the old one works until the new one is first used.
        self.rotate = False
        self.current_token = self.runner_token
        self.next_token: str | None = None
        self.rotated_token = "runner-token-rotated"
        self.refused: list[tuple[str, str]] = []  # (path, Authorization) of every 401
        self.lease_status = 200
        # lease_status applies only once the run has samples stored: a test of "samples measured before the stop
        # were uploaded" must not depend on the kernel emitting one before the first renewal on a busy machine
        self.lease_status_after_samples = False
        self.start_status = 200
        self.samples_statuses: list[int] = []  # answered (front first) before normal 200s
        self.finish_statuses: list[int] = []
        self.down = False  # every runner call answers 503
        self.files: dict[str, bytes] = {}  # path -> bytes served as they are (GET)

        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: Any = None) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> Any:
                n = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(n)) if n else None

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def _handle(self, method: str) -> None:
                url = urlparse(self.path)
                if method == "GET" and url.path in server.files:  # what the installer downloads
                    data = server.files[url.path]
                    self.send_response(200)
                    self.send_header("Content-Type", "application/octet-stream")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                body = self._body() if method == "POST" else None
                with server.lock:
                    server.requests.append((method, url.path, body))
                status, answer = server.route(method, url.path, parse_qs(url.query), body,
                                              self.headers.get("Authorization"))
                self._reply(status, answer)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def route(self, method: str, path: str, query: dict[str, list[str]], body: Any,
              auth: str | None) -> tuple[int, Any]:
        if path == "/api/runners/register" and method == "POST":
            if body.get("registration_token") != self.registration_token:
                return 401, {"detail": "bad or expired registration token"}
            with self.lock:
                self.registrations.append(body)
            return 201, {"host_id": 7, "runner_token": self.runner_token}
        if not path.startswith("/api/runner/"):
            return 404, {"detail": "not found"}
        with self.lock:
            if self.next_token is not None and auth == f"Bearer {self.next_token}" and not self.revoked:
                self.current_token, self.next_token, self.rotate = self.next_token, None, False
            if auth != f"Bearer {self.current_token}" or self.revoked:
                self.refused.append((path, auth or ""))
                return 401, {"detail": "runner credential missing, unknown or revoked"}
        if self.down:
            return 503, {"detail": "down"}
        parts = path.split("/")
        if path == "/api/runner/heartbeat":
            with self.lock:
                self.heartbeats.append(body)
                return 200, {"server_time": time.time(), "rotate_credential": self.rotate}
        if path == "/api/runner/credential/rotate" and method == "POST":
            with self.lock:
                self.next_token = self.rotated_token
                return 200, {"runner_token": self.rotated_token}
        if path == "/api/runner/work":
            wait_s = float(query.get("wait_s", ["0"])[0])
            try:
                return 200, self.work.get(timeout=min(wait_s, 0.5))
            except queue.Empty:
                return 204, None
        if len(parts) == 6 and parts[3] == "runs":
            run_id, action = parts[4], parts[5]
            attempt = body.get("attempt")
            with self.lock:
                if action == "start":
                    self.starts.append((run_id, body))
                    return self.start_status, {}
                if action == "listening":
                    self.listenings.append((run_id, body))
                    return 200, {"ok": True}
                if action == "lease":
                    self.leases.append((run_id, body))
                    waiting = self.lease_status_after_samples and not self.samples.get((run_id, attempt))
                    return 200 if waiting else self.lease_status, {"lease_expires_at": "2030-01-01T00:00:00Z"}
                if action == "samples":
                    self.sample_posts += 1
                    if self.samples_statuses:
                        status = self.samples_statuses.pop(0)
                        if status != 200:
                            return status, {"detail": f"scripted {status}"}
                    if not 1 <= len(body["samples"]) <= 1000:
                        return 422, {"detail": "1..1000 samples"}
                    got = self.samples.setdefault((run_id, attempt), {})
                    new = 0
                    for s in body["samples"]:
                        if s["seq"] not in got:
                            got[s["seq"]] = s
                            new += 1
                    return 200, {"inserted": new, "max_seq": max(got)}
                if action == "finish":
                    if self.finish_statuses:
                        status = self.finish_statuses.pop(0)
                        if status != 200:
                            return status, {"detail": f"scripted {status}"}
                    self.finishes.append((run_id, body))
                    return 200, {}
                if action == "closed":
                    self.closes.append((run_id, body))
                    return 200, {"ok": True}
        return 404, {"detail": "not found"}

    def seqs(self, run_id: Any, attempt: int) -> list[int]:
        with self.lock:
            return sorted(self.samples.get((str(run_id), attempt), {}))

    def wait_for(self, predicate, timeout_s: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                if predicate():
                    return True
            time.sleep(0.02)
        return False


def pids_alive(pids: list[int]) -> list[int]:
    alive = []
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        # a zombie is dead for our purposes
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().split(") ", 1)[1].startswith("Z"):
                    continue
        except OSError:
            continue
        alive.append(pid)
    return alive


# --- running one assignment through the daemon ----------------------------------------------

CPU_PARAMS = {"op": "fp64", "threads": [1, 2], "repeats": 1, "duration_s": 1, "warmup_s": 0}


def assignment(run_id: int = 1, attempt: int = 1, experiment: str = "cpu", params: Any = None,
               deadline_s: float = 30, lease_s: float = 15) -> dict[str, Any]:
    return {"run_id": run_id, "attempt": attempt, "experiment": experiment,
            "params": dict(CPU_PARAMS) if params is None else params,
            "deadline_s": deadline_s, "lease_s": lease_s}


@contextmanager
def daemon_for(settings):
    d = Daemon(settings)
    d.api.set_token(FakeServer.runner_token)
    for path in (settings.state_dir, settings.spool_dir, settings.work_dir):
        path.mkdir(parents=True, exist_ok=True)
    d.uploader.start()
    try:
        yield d
    finally:
        d.close()


def run_once(server, settings, assign) -> tuple[Daemon, dict[str, Any] | None]:
    with daemon_for(settings) as d:
        d.execute(assign)
        assert d.state is State.IDLE and d.run is None
        assert d.uploader.wait_idle(5), "uploader did not drain"
        finish = server.finishes[-1][1] if server.finishes else None
        return d, finish
