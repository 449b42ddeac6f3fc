"""What every chaos trial stands on: the profile's timings, the tally of one scenario, and the helpers that start
jobs, wait for runs, find and freeze processes and check the ledger (docs/reliability.md, rule 11)."""
import json
import os
import random
import signal
import statistics
import subprocess
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from hostbench_common.runstatus import TERMINAL, RunStatus
from hostbench_stack.netns import Netns
from hostbench_stack.stack import Child, Stack

# The short-timeout profile every trial runs in: the server grants 3-s leases (the runner then renews every 1 s and
# stops its kernel 2 s after its last renewal), reconciles every 2 s, and asks for a heartbeat every 1 s.
LEASE_S = 3.0
RECONCILE_S = 2.0
HEARTBEAT_S = 1.0
RESTART_S = 2.0  # how long a killed worker stays down (./hostbench up's supervisor restarts it within 0.5 s)
HANG_ANSWER_S = 5.0  # a hung part may slow an answer this much, no more
HEALTH_NOTICE_S = 3.0  # from this long after a part hung, /api/health must say so
SPOOL_FULL_LIMIT_S = 10.0  # a run whose spool's file system filled up must have ended by then


@dataclass
class Tally:
    trials: int = 0
    lost: int = 0
    duplicated: int = 0
    stuck: int = 0
    kernels_left: int = 0
    dead_claims: int = 0
    bad_answers: int = 0  # postgres-stop: a 500, a 503 without Retry-After, no answer, or one slower than 5 s
    resolve_s: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def row(self) -> dict:
        return {"ok": self.ok, "trials": self.trials, "lost": self.lost, "duplicated": self.duplicated,
                "stuck": self.stuck, "kernels_left": self.kernels_left, "dead_claims": self.dead_claims,
                "bad_answers": self.bad_answers,
                "resolve_p50_s": round(statistics.median(self.resolve_s), 2) if self.resolve_s else None,
                "resolve_max_s": round(max(self.resolve_s), 2) if self.resolve_s else None}

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.stuck or self.kernels_left or self.dead_claims
                    or self.bad_answers)


class TrialsBase:
    def __init__(self, stack: Stack, rng: random.Random):
        self.stack = stack
        self.rng = rng
        self.auth = stack.admin_headers()
        self.http = httpx.Client(base_url=stack.url, headers=self.auth, timeout=10)
        hosts = {h["name"]: h["id"] for h in self.get("/api/hosts")["data"]}
        self.host = hosts["chaos-a"]
        self.host_b = hosts["chaos-b"]
        self.host_c: int | None = hosts.get("chaos-c")  # the runner in a network namespace (partition)
        self.ns: Netns | None = None
        self.ns_why = ""
        self.host_d: int | None = hosts.get("chaos-d")  # the runner whose spool is on a small tmpfs (spool-full)
        self.spool_mount: Path | None = None
        self.spool_why = ""
        self.runner: Child = stack.children["runner"]
        self.spool = stack.state / "runner" / "spool"
        self.pg_outage_s = 20.0
        self.redis_outage_s = 20.0
        self.hang_s = 20.0
        self.partition_s = 10.0

    def job(self, duration_s: float) -> int:
        return self.job_for(self.host, duration_s)

    def job_for(self, host: int, duration_s: float) -> int:
        r = self.http.post("/api/jobs", json={"host_ids": [host], "experiment": "cpu_trace",
                                              "params": {"op": "fp64", "threads": 1, "duration_s": duration_s}})
        if r.status_code != 201:
            raise RuntimeError(f"job refused: {r.status_code} {r.text[:300]}")
        return r.json()["runs"][0]["id"]

    def get(self, path: str) -> dict:
        """A read as the dashboard makes it: a 503 or 429 (a part just back, or the API shedding dashboard reads
        while its CPU is short) is asked again after its Retry-After, for up to 20 s."""
        deadline = time.monotonic() + 20
        while True:
            r = self.http.get(path)
            if r.status_code not in (429, 503):
                r.raise_for_status()
                body: dict = r.json()
                return body
            if time.monotonic() > deadline:
                raise RuntimeError(f"GET {path} answered {r.status_code} for 20 s: {r.text[:200]}")
            time.sleep(min(1.0, max(0.2, float(r.headers.get("Retry-After") or 0.2))))

    def run(self, run_id: int) -> dict:
        """The run as the API shows it."""
        return self.get(f"/api/runs/{run_id}")

    def wait(self, run_id: int, statuses: Collection[str], timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            run = self.run(run_id)
            if run["status"] in statuses:
                return run
            time.sleep(0.1)
        return None

    def wait_online(self, host_id: int | None = None, runner: Child | None = None, timeout: float = 30) -> None:
        host_id = self.host if host_id is None else host_id
        runner = runner or self.runner
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            host = self.get(f"/api/hosts/{host_id}")
            busy = self.get(f"/api/runs?host_id={host_id}&status=running")["count"] + \
                self.get(f"/api/runs?host_id={host_id}&status=dispatched")["count"]
            if host["online"] and not busy and runner.alive():
                return
            time.sleep(0.25)
        raise RuntimeError(f"the runner of host {host_id} did not come back online and idle")

    def kernels_of(self, pid: int) -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
        return found

    def kill_runner(self) -> list[int]:
        """kill -9 the runner by its pid; returns the pids of the kernels it had started."""
        assert self.runner.proc is not None
        pid = self.runner.proc.pid
        kernels = self.kernels_of(pid)
        os.kill(pid, signal.SIGKILL)
        self.runner.proc.wait(10)
        return kernels

    def spooled(self, run_id: int, attempt: int) -> set[int]:
        path = self.spool / f"run-{run_id}-attempt-{attempt}" / "samples.jsonl"
        seqs = set()
        if path.exists():
            for line in path.read_text().splitlines():
                try:
                    seqs.add(int(json.loads(line)["seq"]))
                except (ValueError, KeyError, TypeError):
                    pass
        return seqs

    def stored(self, run_id: int) -> list[int]:
        return [s["seq"] for s in self.get(f"/api/runs/{run_id}/samples")["data"]]

    def ledger(self, t: Tally, run_id: int, spooled: set[int]) -> None:
        seqs = self.stored(run_id)
        t.duplicated += len(seqs) - len(set(seqs))
        expected = set(range(max([*seqs, *spooled], default=-1) + 1))  # contiguous from 0, and all it spooled
        missing = expected - set(seqs)
        t.lost += len(missing)
        if missing:
            t.notes.append(f"run {run_id}: seq {sorted(missing)[:10]} missing")

    def _kill_child(self, name: str) -> list[int]:
        """kill -9 one of the stack's processes by pid; returns the pids of its children (a prefork worker's
        pool) so the trial can check none outlives it."""
        child: Child = self.stack.children[name]
        assert child.proc is not None
        pid = child.proc.pid
        kids = self.kernels_of(pid)
        os.kill(pid, signal.SIGKILL)
        child.proc.wait(10)
        return kids

    def _job_dispatched(self, t: Tally, run_id: int, since: float, limit_s: float, *, timed: bool = True,
                        must_succeed: bool = False) -> float | None:
        """The run must be running (or done) within limit_s of `since` (counted in the scenario's resolve times
        when `timed`), then end at attempt 1 (one run, no second attempt) — and succeed, with `must_succeed` —
        with every sample stored once. Returns the seconds from `since` to its start, None if it never did."""
        started = self.wait(run_id, {RunStatus.running, *TERMINAL}, limit_s + 30)
        if started is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} not dispatched {limit_s + 30:.0f} s after the fault")
            return None
        waited = time.monotonic() - since
        if timed:
            t.resolve_s.append(waited)
            if waited > limit_s:
                t.stuck += 1
                t.notes.append(f"run {run_id} waited {waited:.1f} s to start (limit {limit_s:.0f} s)")
        end = self.wait(run_id, TERMINAL, 60)
        if end is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} not terminal 60 s after it started")
            return waited
        if end["status"] != RunStatus.succeeded or end["attempt"] != 1:
            t.duplicated += end["attempt"] > 1
            t.stuck += must_succeed and end["status"] != RunStatus.succeeded
            t.notes.append(f"run {run_id}: {end['status']} at attempt {end['attempt']}: {end['status_reason']}")
        self.ledger(t, run_id, set())
        return waited

    def _probe(self, t: Tally, until: float) -> dict[str, int]:
        """What the API answers while PostgreSQL is away: a dashboard read and a runner-side call, every 0.5 s.
        Anything but 200/503 (a 500 above all) or an answer slower than 5 s is a bad answer."""
        seen: dict[str, int] = {}
        while time.monotonic() < until:
            for method, path in (("GET", f"/api/hosts/{self.host}"), ("GET", "/api/runs?limit=5")):
                t0 = time.monotonic()
                try:
                    r = self.http.request(method, path, timeout=10)
                    took, st = time.monotonic() - t0, r.status_code
                    key = str(st)
                    if st == 503 and not r.headers.get("Retry-After"):
                        key = "503 without Retry-After"
                except httpx.HTTPError as exc:
                    took, key = time.monotonic() - t0, type(exc).__name__
                seen[key] = seen.get(key, 0) + 1
                if key not in ("200", "503") or took > 5:
                    t.bad_answers += 1
                    t.notes.append(f"{method} {path} during the outage: {key} after {took:.1f} s")
            time.sleep(0.5)
        return seen

    def _freeze(self, pids: list[int], sig: int) -> None:
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def _family(self, pid: int) -> list[int]:
        """A process and its children (PostgreSQL's postmaster and its backends): a hung server stops them all."""
        return [pid, *self.kernels_of(pid)]

    def _job_on(self, host: int, duration_s: float) -> tuple[int | None, float, str]:
        """Create a job and time the answer: (run id or None, seconds, status or exception name)."""
        t0 = time.monotonic()
        try:
            r = self.http.post("/api/jobs", json={"host_ids": [host], "experiment": "cpu_trace",
                                                  "params": {"op": "fp64", "threads": 1, "duration_s": duration_s}},
                               timeout=10)
        except httpx.HTTPError as exc:
            return None, time.monotonic() - t0, type(exc).__name__
        took = time.monotonic() - t0
        return (r.json()["runs"][0]["id"] if r.status_code == 201 else None), took, str(r.status_code)

    def _hang_probe(self, t: Tally, until: float, part: str, since: float) -> dict[str, int]:
        """While `part` (database, broker or reconciler) is hung: a dashboard read, a list, and /api/health every
        0.5 s. Each must be answered within HANG_ANSWER_S, with 200 or a 503 that carries Retry-After; from
        HEALTH_NOTICE_S after the fault on, /api/health must say that `part` is not ok."""
        seen: dict[str, int] = {}
        while time.monotonic() < until:
            for path in (f"/api/hosts/{self.host}", "/api/runs?limit=5", "/api/health"):
                t0 = time.monotonic()
                try:
                    r = self.http.get(path, timeout=10)
                    took, st = time.monotonic() - t0, r.status_code
                    key = f"{path.split('/')[2].split('?')[0]} {st}"
                    bad = st not in (200, 503) or (st == 503 and not r.headers.get("Retry-After"))
                    if path == "/api/health" and st == 200 and time.monotonic() - since > HEALTH_NOTICE_S:
                        said = r.json().get(part, "?")
                        if said == "ok":
                            bad = True
                            key = f"health says {part} ok"
                except httpx.HTTPError as exc:
                    took, key, bad = time.monotonic() - t0, f"{path} {type(exc).__name__}", True
                seen[key] = seen.get(key, 0) + 1
                if bad or took > HANG_ANSWER_S:
                    t.bad_answers += 1
                    if len(t.notes) < 40:
                        t.notes.append(f"GET {path} while the {part} was hung: {key} after {took:.1f} s")
            time.sleep(0.5)
        return seen


def _small_tmpfs(path: Path, size: str) -> tuple[Path | None, str]:
    """A tmpfs of `size` mounted at `path` (created): (the mount, "") or (None, why not)."""
    if os.geteuid() != 0:
        return None, "mounting a small tmpfs needs root"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)], check=False,
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"mount -t tmpfs failed: {r.stderr.strip()[:200]}"
    return path, ""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")
