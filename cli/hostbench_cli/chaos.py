"""./hostbench chaos: faults injected by process id into the real stack, then the ledger checked
(docs/reliability.md, rule 11).

The stack is the real one (embedded PostgreSQL and Redis, the API, a Celery worker and beat, two runners with the
C kernels) in a short-lease profile. Each trial runs a short real job, injects one fault at a random moment into a
process the trial started, and afterwards checks what PostgreSQL holds: the run terminal, every sample the runner
had spooled present exactly once with contiguous `seq`, no kernel left running, no host stuck busy.

Scenarios so far:
- runner-kill: `kill -9` of the runner during a run; odd trials restart it 3 s later, even ones only once the
  server has resolved the run (it stayed down).
- idle-runner-kill: `kill -9` of an idle runner (its long poll open), then a job for its host within the poll's
  window: the dead poll must claim nothing; the job runs once the runner is back.
- runner-stop: SIGSTOP of the runner mid-run until the server has failed the run, then SIGCONT: the kernel that
  ran on meanwhile must be gone within 2 s + one renewal period; the attempt's samples stored once.
- worker-kill: `kill -9` of the Celery worker, a job created while it is down, the worker back 2 s later: the
  run starts within 2 s + the reconcile period + 3 s, once, and no pool process of the killed worker lives on.
- beat-kill: `kill -9` of Celery beat, kept down for the trial: a job created meanwhile still starts within the
  reconcile period + 3 s, once.
- redis-kill: `kill -9` of Redis for --redis-outage-s (20 s), a job created meanwhile and one right after its
  return: both run once, every sample stored once, the second starts within 30 s of Redis's return.
- postgres-stop: PostgreSQL stopped at once (SIGQUIT) during a run for --pg-outage-s (20 s), then started again:
  the API answers 503 with Retry-After throughout (a 500, a 503 without it, or an answer slower than 5 s is a
  bad answer), the run is not failed and not restarted, every sample is stored once.

It prints one row per scenario and ends with one JSON line, as `./hostbench bench` does."""
import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from hostbench_cli import STATE, netns
from hostbench_cli.netns import Netns
from hostbench_cli.stack import Child, Stack

# The short-timeout profile every trial runs in: the server grants 3-s leases (the runner then renews every 1 s and
# stops its kernel 2 s after its last renewal), reconciles every 2 s, and asks for a heartbeat every 1 s.
LEASE_S = 3.0
RECONCILE_S = 2.0
HEARTBEAT_S = 1.0
RESTART_S = 2.0  # how long a killed worker stays down (./hostbench up's supervisor restarts it within 0.5 s)
TERMINAL = {"succeeded", "failed", "untrusted", "cancelled"}
HANG_ANSWER_S = 5.0  # a hung part may slow an answer this much, no more
HEALTH_NOTICE_S = 6.0  # from this long after a part hung, /api/health must say so
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
        return {"trials": self.trials, "lost": self.lost, "duplicated": self.duplicated, "stuck": self.stuck,
                "kernels_left": self.kernels_left, "dead_claims": self.dead_claims, "bad_answers": self.bad_answers,
                "resolve_p50_s": round(statistics.median(self.resolve_s), 2) if self.resolve_s else None,
                "resolve_max_s": round(max(self.resolve_s), 2) if self.resolve_s else None}

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.stuck or self.kernels_left or self.dead_claims
                    or self.bad_answers)


class Trials:
    def __init__(self, stack: Stack, rng: random.Random):
        self.stack = stack
        self.rng = rng
        self.auth = stack.admin_headers()
        self.http = httpx.Client(base_url=stack.url, headers=self.auth, timeout=10)
        hosts = {h["name"]: h["id"] for h in self.http.get("/api/hosts").json()["data"]}
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

    # -- helpers -------------------------------------------------------------------------------------
    def job(self, duration_s: float) -> int:
        return self.job_for(self.host, duration_s)

    def job_for(self, host: int, duration_s: float) -> int:
        r = self.http.post("/api/jobs", json={"host_ids": [host], "experiment": "cpu_trace",
                                              "params": {"op": "fp64", "threads": 1, "duration_s": duration_s}})
        if r.status_code != 201:
            raise RuntimeError(f"job refused: {r.status_code} {r.text[:300]}")
        return r.json()["runs"][0]["id"]

    def run(self, run_id: int) -> dict:
        """The run as the API shows it; a 503 (a part just back, the API catching up) is asked again."""
        for _ in range(100):
            r = self.http.get(f"/api/runs/{run_id}")
            if r.status_code != 503:
                r.raise_for_status()
                return r.json()
            time.sleep(0.2)
        raise RuntimeError(f"GET /api/runs/{run_id} answered 503 for 20 s: {r.text[:200]}")

    def wait(self, run_id: int, statuses: set[str], timeout: float) -> dict | None:
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
            host = self.http.get(f"/api/hosts/{host_id}").json()
            busy = self.http.get(f"/api/runs?host_id={host_id}&status=running").json()["count"] + \
                self.http.get(f"/api/runs?host_id={host_id}&status=dispatched").json()["count"]
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
        return [s["seq"] for s in self.http.get(f"/api/runs/{run_id}/samples").json()["data"]]

    def ledger(self, t: Tally, run_id: int, spooled: set[int]) -> None:
        seqs = self.stored(run_id)
        t.duplicated += len(seqs) - len(set(seqs))
        expected = set(range(max([*seqs, *spooled], default=-1) + 1))  # contiguous from 0, and all it spooled
        missing = expected - set(seqs)
        t.lost += len(missing)
        if missing:
            t.notes.append(f"run {run_id}: seq {sorted(missing)[:10]} missing")

    # -- scenarios -----------------------------------------------------------------------------------
    def runner_kill(self, t: Tally, i: int) -> None:
        self.wait_online()
        run_id = self.job(8)
        if self.wait(run_id, {"running"}, 30) is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} never started")
            return
        time.sleep(self.rng.uniform(0.3, 5.0))
        attempt = self.run(run_id)["attempt"]
        kernels = self.kill_runner()
        t_kill = time.monotonic()
        spooled = self.spooled(run_id, attempt)
        comes_back = i % 2 == 1
        if comes_back:
            time.sleep(3)
            self.runner.start()
        end = self.wait(run_id, TERMINAL, LEASE_S + RECONCILE_S + 30)
        resolved = time.monotonic() - t_kill
        time.sleep(2 - min(2, time.monotonic() - t_kill))
        t.kernels_left += sum(1 for k in kernels if _alive(k))
        if not comes_back:
            self.runner.start()  # back after the server resolved the run: its backlog goes up now
        if end is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} not terminal {resolved:.0f} s after the kill")
            return
        t.resolve_s.append(resolved)
        if resolved > LEASE_S + 5 + (3 if comes_back else 0):
            t.stuck += 1
            t.notes.append(f"run {run_id} resolved {resolved:.1f} s after the kill (limit: the {LEASE_S:.0f}-s lease "
                           f"+ 5 s)")
        self.wait_online()  # the restarted runner has uploaded its backlog and finished the attempt
        self.ledger(t, run_id, spooled)

    def idle_runner_kill(self, t: Tally, i: int) -> None:
        self.wait_online()
        time.sleep(1.5)  # its long poll is open
        self.kill_runner()
        time.sleep(self.rng.uniform(0.2, 1.5))
        run_id = self.job(3)
        watched_until = time.monotonic() + 8
        claimed_dead = False
        while time.monotonic() < watched_until:  # the runner is dead: nothing may claim the run
            if self.run(run_id)["attempt"] > 0:
                claimed_dead = True
                t.notes.append(f"run {run_id} was claimed while its runner was dead")
                break
            time.sleep(0.1)
        t_back = time.monotonic()
        self.runner.start()
        end = self.wait(run_id, TERMINAL, 60)
        if end is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} not terminal 60 s after the runner came back")
            return
        t.resolve_s.append(time.monotonic() - t_back)
        if end["status"] != "succeeded" or end["attempt"] != 1:
            t.notes.append(f"run {run_id}: {end['status']} at attempt {end['attempt']}: {end['status_reason']}")
        t.dead_claims += claimed_dead or end["attempt"] > 1  # one per trial: an attempt the live runner never had
        self.ledger(t, run_id, set())


    def runner_stop(self, t: Tally, i: int) -> None:
        """SIGSTOP of the runner mid-run, held until the server has failed the run (its lease ran out), then
        SIGCONT. The woken runner's old attempt is refused (409) or its own fence has passed: its kernel, which
        ran on meanwhile, must be gone within 2 s + one renewal period of SIGCONT; the samples of the attempt
        are stored once; the host is free again."""
        self.wait_online()
        run_id = self.job(25)
        if self.wait(run_id, {"running"}, 30) is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} never started")
            return
        time.sleep(self.rng.uniform(0.5, 3.0))
        assert self.runner.proc is not None
        pid = self.runner.proc.pid
        kernels = self.kernels_of(pid)
        os.kill(pid, signal.SIGSTOP)
        t_stop = time.monotonic()
        try:
            end = self.wait(run_id, TERMINAL, LEASE_S + RECONCILE_S + 10)
        finally:
            os.kill(pid, signal.SIGCONT)
        t_cont = time.monotonic()
        deadline = t_cont + 2 + LEASE_S / 3
        while any(_alive(k) for k in kernels) and time.monotonic() < deadline:
            time.sleep(0.05)
        gone_s = time.monotonic() - t_cont
        left = [k for k in kernels if _alive(k)]
        t.kernels_left += len(left)
        if left:
            t.notes.append(f"run {run_id}: kernel {left} still running {gone_s:.1f} s after SIGCONT")
        if end is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} not failed while its runner was stopped")
            return
        t.resolve_s.append(t_cont - t_stop)
        if end["status"] != "failed":
            t.notes.append(f"run {run_id}: {end['status']} while its runner was stopped: {end['status_reason']}")
        t.notes.append(f"run {run_id}: {end['status']} after {t_cont - t_stop:.1f} s stopped; kernel gone "
                       f"{gone_s:.1f} s after SIGCONT")
        self.wait_online()
        self.ledger(t, run_id, set())

    # -- the Celery side ------------------------------------------------------------------------------
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
        started = self.wait(run_id, {"running", *TERMINAL}, limit_s + 30)
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
        if end["status"] != "succeeded" or end["attempt"] != 1:
            t.duplicated += end["attempt"] > 1
            t.stuck += must_succeed and end["status"] != "succeeded"
            t.notes.append(f"run {run_id}: {end['status']} at attempt {end['attempt']}: {end['status_reason']}")
        self.ledger(t, run_id, set())
        return waited

    def worker_kill(self, t: Tally, i: int) -> None:
        """kill -9 the Celery worker, then create a job while it is down; it is back RESTART_S later, as
        `./hostbench up`'s supervisor brings it back. The doorbell waits in Redis; the run must start within
        the restart + the reconcile period + 3 s, once."""
        self.wait_online()
        pool = self._kill_child("worker")
        t_kill = time.monotonic()
        time.sleep(self.rng.uniform(0.0, 1.0))
        run_id = self.job(3)
        time.sleep(max(0.0, RESTART_S - (time.monotonic() - t_kill)))
        self.stack.children["worker"].start()
        self._job_dispatched(t, run_id, t_kill, RESTART_S + RECONCILE_S + 3)
        time.sleep(1)
        left = [k for k in pool if _alive(k)]
        t.kernels_left += len(left)  # here: the killed worker's pool processes still alive
        if left:
            t.notes.append(f"worker pool processes {left} outlived the killed worker")

    def beat_kill(self, t: Tally, i: int) -> None:
        """kill -9 Celery beat and keep it down for the trial: a job created meanwhile must still be dispatched
        within the reconcile period + 3 s (dispatch is the API's doorbell, not beat's schedule)."""
        self.wait_online()
        self._kill_child("beat")
        t_kill = time.monotonic()
        time.sleep(self.rng.uniform(0.0, 1.0))
        run_id = self.job(3)
        try:
            self._job_dispatched(t, run_id, t_kill, RECONCILE_S + 3)
        finally:
            self.stack.children["beat"].start()

    # -- PostgreSQL --------------------------------------------------------------------------------------
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

    def postgres_stop(self, t: Tally, i: int) -> None:
        """PostgreSQL stopped at once (SIGQUIT: no checkpoint, as a crash) during a run and started again
        PG_OUTAGE_S later. The API answers 503 with Retry-After meanwhile, never a 500 and never slowly; the runner
        measures on into its spool; the run is not failed by an outage shorter than the runner's grace; its
        backlog is stored once PostgreSQL is back, every sample exactly once."""
        self.wait_online()
        pg = self.stack.pg
        assert pg is not None and pg.proc is not None
        run_id = self.job(self.pg_outage_s + 10)
        if self.wait(run_id, {"running"}, 30) is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} never started")
            return
        time.sleep(self.rng.uniform(0.5, 3.0))
        os.kill(pg.proc.pid, signal.SIGQUIT)
        pg.proc.wait(30)
        t_stop = time.monotonic()
        seen = self._probe(t, t_stop + self.pg_outage_s)
        pg.start()
        t_back = time.monotonic()
        end = self.wait(run_id, TERMINAL, 60)
        if end is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} not terminal 60 s after PostgreSQL came back")
            return
        t.resolve_s.append(time.monotonic() - t_back)
        t.notes.append(f"run {run_id}: {end['status']} (attempt {end['attempt']}); during the outage {seen}")
        if end["status"] != "succeeded" or end["attempt"] != 1:
            t.stuck += 1  # a run the outage failed or restarted
            t.notes.append(f"run {run_id}: {end['status_reason']}")
        self.ledger(t, run_id, set())

    # -- Redis ---------------------------------------------------------------------------------------------
    def redis_kill(self, t: Tally, i: int) -> None:
        """`kill -9` of Redis (the Celery broker, the doorbells, the live fan-out) for --redis-outage-s (20 s), a
        job created while it is down, Redis started again (its own data as it left it), a second job right
        after. Both jobs are accepted, run once at attempt 1 with every sample stored once, and the second
        starts within 30 s of Redis's return. PostgreSQL holds the jobs; Redis only rings."""
        self.wait_online()
        redis = self.stack.redis
        assert redis is not None and redis.proc is not None
        os.kill(redis.proc.pid, signal.SIGKILL)
        redis.proc.wait(10)
        t_kill = time.monotonic()
        time.sleep(self.rng.uniform(0.5, 2.0))
        try:
            during = self.job(3)
        except RuntimeError as exc:
            t.bad_answers += 1
            t.notes.append(f"a job created while Redis was down was refused: {exc}")
            during = None
        started_during: float | None = None  # when the job created during the outage was seen running
        while time.monotonic() - t_kill < self.redis_outage_s:
            if during is not None and started_during is None and \
                    self.run(during)["status"] in {"running", *TERMINAL}:
                started_during = time.monotonic() - t_kill
            time.sleep(0.2)
        redis.start()
        t_back = time.monotonic()
        after = self.job(3)
        if during is not None:
            waited = self._job_dispatched(t, during, t_kill, self.redis_outage_s + 30, timed=False,
                                          must_succeed=True)
            if waited is not None:
                t.notes.append(f"run {during} (created during the outage) started " + (
                    f"{started_during:.1f} s after the kill, Redis still down" if started_during is not None
                    else f"only after Redis was back ({waited:.1f} s after the kill)"))
        waited = self._job_dispatched(t, after, t_back, 30.0, must_succeed=True)
        if waited is not None:
            t.notes.append(f"run {after} (created after it) started {waited:.1f} s after Redis was back")

    # -- the API ---------------------------------------------------------------------------------------------
    def _follow(self, run_id: int, got: list[int], log: list[str], stop: threading.Event) -> None:
        """A browser's EventSource, by hand: follow the run's live stream, and on any break reconnect (after the
        server's `retry`, here 0.5 s) with Last-Event-ID = the last sample's id, until the `end` event."""
        last: int | None = None
        while not stop.is_set():
            headers = {**self.auth, "Accept": "text/event-stream"}
            if last is not None:
                headers["Last-Event-ID"] = str(last)
            try:
                with httpx.stream("GET", f"{self.stack.url}/api/runs/{run_id}/events", headers=headers,
                                  timeout=httpx.Timeout(10, read=30)) as r:
                    if r.status_code != 200:
                        log.append(f"stream answered {r.status_code}")
                        time.sleep(0.5)
                        continue
                    event, data, eid = "", "", None
                    for line in r.iter_lines():
                        if line.startswith("id: "):
                            eid = int(line[4:])
                        elif line.startswith("event: "):
                            event = line[7:]
                        elif line.startswith("data: "):
                            data = line[6:]
                        elif line == "":
                            if event == "sample":
                                got.append(json.loads(data)["seq"])
                                last = eid
                            elif event == "end":
                                return
                            event, data, eid = "", "", None
            except (httpx.HTTPError, ValueError) as exc:
                log.append(f"stream broke: {type(exc).__name__}")
            time.sleep(0.5)

    def api_kill(self, t: Tally, i: int) -> None:
        """`kill -9` of the API (its whole process group) while a browser-like client follows a run's live stream,
        then the API started again at once, as `./hostbench up`'s supervisor does. The client resumes with
        Last-Event-ID: it must end with every stored sample exactly once, in order (0 gaps, 0 duplicates), and
        the run must end; whether the run survives depends on how long the API was away against the runner's
        fence (2 s in this profile), so either end is accepted if the ledger holds."""
        self.wait_online()
        run_id = self.job(10)
        if self.wait(run_id, {"running"}, 30) is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} never started")
            return
        got: list[int] = []
        log: list[str] = []
        stop = threading.Event()
        follower = threading.Thread(target=self._follow, args=(run_id, got, log, stop), daemon=True)
        follower.start()
        time.sleep(self.rng.uniform(1.0, 4.0))
        api = self.stack.children["api"]
        assert api.proc is not None
        os.killpg(api.proc.pid, signal.SIGKILL)
        api.proc.wait(10)
        t_kill = time.monotonic()
        time.sleep(0.5)
        api.start()
        self.stack.wait_healthy(60)
        back = time.monotonic() - t_kill
        end = self.wait(run_id, TERMINAL, 60)
        follower.join(30)
        stop.set()
        if end is None or follower.is_alive():
            t.stuck += 1
            t.notes.append(f"run {run_id}: " + ("not terminal" if end is None else "the stream never ended"))
            return
        t.resolve_s.append(back)
        stored = self.stored(run_id)
        t.duplicated += len(got) - len(set(got))
        gaps = [s for s in stored if s not in set(got)]
        t.lost += len(gaps)
        if got != sorted(got):
            t.notes.append(f"run {run_id}: samples arrived out of order")
            t.lost += 1
        t.notes.append(f"run {run_id}: {end['status']} ({(end['status_reason'] or '')[:60]}); API back in "
                       f"{back:.1f} s; stream got {len(got)} of {len(stored)} stored, {len(gaps)} missing; "
                       f"{'; '.join(log[:3])}")
        self.wait_online()
        self.ledger(t, run_id, set())

    # -- the network -----------------------------------------------------------------------------------------
    def partition(self, t: Tally, i: int) -> None:
        """The runner of host chaos-c lives in a network namespace (another host, as far as the network goes). Its
        link is cut for --partition-s (10 s; odd trials 60 s) mid-run, then restored. The runner must stop its
        kernel by its own fence (it cannot know whether the server gave its lease away), the server must end the
        run once the lease ran out, and once the link is back the runner must come back online on its own and run
        the next job, at attempt 1, with every sample stored once."""
        if self.ns is None or self.host_c is None:
            t.notes.append(f"skipped: {self.ns_why}")
            return
        runner = self.stack.children["runner-c"]
        self.wait_online(self.host_c, runner)
        run_id = self.job_for(self.host_c, 30)
        if self.wait(run_id, {"running"}, 30) is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} never started")
            return
        time.sleep(self.rng.uniform(0.5, 2.0))
        assert runner.proc is not None
        kernels = self.kernels_of(runner.proc.pid)
        cut_s = self.partition_s * (6 if i % 2 else 1)
        self.ns.link(False)
        t_cut = time.monotonic()
        try:
            end = self.wait(run_id, TERMINAL, LEASE_S + RECONCILE_S + 3)
            ended_s = time.monotonic() - t_cut
            deadline = t_cut + 2 + LEASE_S  # the runner's fence (2 s) and a renewal period
            while any(_alive(k) for k in kernels) and time.monotonic() < deadline:
                time.sleep(0.05)
            left = [k for k in kernels if _alive(k)]
            t.kernels_left += len(left)
            if left:
                t.notes.append(f"run {run_id}: kernel {left} still running {time.monotonic() - t_cut:.1f} s into "
                               f"the partition")
            time.sleep(max(0.0, cut_s - (time.monotonic() - t_cut)))
        finally:
            self.ns.link(True)
        t_heal = time.monotonic()
        if end is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} still {self.run(run_id)['status']} {ended_s:.0f} s into a partition")
        after = self.job_for(self.host_c, 3)  # the runner must take work again on its own
        back_s = self._job_dispatched(t, after, t_heal, 30.0, must_succeed=True)
        self.ledger(t, run_id, set())
        t.notes.append(f"{cut_s:.0f}-s partition: run {run_id} {end['status'] if end else '?'} {ended_s:.1f} s in "
                       f"({(end or {}).get('status_reason', '')[:70]}); the next job started "
                       f"{'-' if back_s is None else f'{back_s:.1f}'} s after the heal")

    # -- the runner's disk ------------------------------------------------------------------------------------
    def spool_full(self, t: Tally, i: int) -> None:
        """Host chaos-d's runner keeps its spool on a 2-MiB tmpfs the trial mounted. Mid-run the trial fills it (a
        filler file, until ENOSPC). A sample that cannot be kept must not be measured on: the run must end
        promptly as failed with the real reason (the spool could not be written), not as a silent runner, with
        every sample it did keep stored once; once the filler is gone the runner must run the next job."""
        if self.spool_mount is None or self.host_d is None:
            t.notes.append(f"skipped: {self.spool_why}")
            return
        runner = self.stack.children["runner-d"]
        self.wait_online(self.host_d, runner)
        before = i % 2 == 1  # odd trials: the disk is full before the run arrives
        filler = self.spool_mount / "filler"
        if not before:
            run_id = self.job_for(self.host_d, 60)
            if self.wait(run_id, {"running"}, 30) is None:
                t.stuck += 1
                t.notes.append(f"run {run_id} never started")
                return
            time.sleep(self.rng.uniform(1.0, 3.0))
        t_full = time.monotonic()
        try:
            with open(filler, "wb") as fh:
                chunk = b"\0" * 4096
                while True:
                    fh.write(chunk)
                    fh.flush()
        except OSError:
            pass
        if before:
            run_id = self.job_for(self.host_d, 60)
        limit = SPOOL_FULL_LIMIT_S
        try:
            end = self.wait(run_id, TERMINAL, limit)
            ended_s = time.monotonic() - t_full
        finally:
            filler.unlink(missing_ok=True)
        if end is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} not terminal {limit:.0f} s after its spool filled up")
            self.wait(run_id, TERMINAL, 90)
        else:
            t.resolve_s.append(ended_s)
            reason = end["status_reason"] or ""
            if end["status"] != "failed" or "spool" not in reason:
                t.stuck += 1  # the wrong end, or the wrong reason ("runner went silent")
            t.notes.append(f"run {run_id} ({'disk full before it' if before else 'disk filled mid-run'}): "
                           f"{end['status']} {ended_s:.1f} s after: {reason[:90]}")
        self.ledger(t, run_id, set())
        after = self.job_for(self.host_d, 3)  # space is back: the runner must work again
        self._job_dispatched(t, after, time.monotonic(), 30.0, timed=False, must_succeed=True)

    # -- hung rather than dead (SIGSTOP) -------------------------------------------------------------------
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

    def redis_stop(self, t: Tally, i: int) -> None:
        """Redis hung (SIGSTOP) for --hang-s during a run, then SIGCONT. A job is still accepted at once
        (PostgreSQL is the truth; Redis only rings), no request waits on Redis longer than a short timeout, health
        says the broker is not answering, the running benchmark is not disturbed (its uploads do not wait on the
        live fan-out), and the job created meanwhile runs once Redis answers again."""
        self.wait_online()
        redis = self.stack.redis
        assert redis is not None and redis.proc is not None
        run_id = self.job(self.hang_s + 6)
        if self.wait(run_id, {"running"}, 30) is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} never started")
            return
        time.sleep(self.rng.uniform(0.5, 2.0))
        self._freeze([redis.proc.pid], signal.SIGSTOP)
        t_stop = time.monotonic()
        try:
            time.sleep(self.rng.uniform(0.5, 2.0))
            during, took, st = self._job_on(self.host_b, 3)
            if during is None or took > HANG_ANSWER_S:
                t.bad_answers += 1
                t.notes.append(f"a job created while Redis was hung: {st} after {took:.1f} s")
            seen = self._hang_probe(t, t_stop + self.hang_s, "broker", t_stop)
        finally:
            self._freeze([redis.proc.pid], signal.SIGCONT)
        t_back = time.monotonic()
        t.notes.append(f"job created during the hang answered in {took:.2f} s ({st}); during the hang {seen}")
        end = self.wait(run_id, TERMINAL, 60)
        if end is None or end["status"] != "succeeded" or end["attempt"] != 1:
            t.stuck += 1
            t.notes.append(f"run {run_id} (running through the hang): "
                           + ("not terminal" if end is None else f"{end['status']} at attempt {end['attempt']}: "
                                                                 f"{end['status_reason']}"))
        else:
            t.resolve_s.append(time.monotonic() - t_back)
        self.ledger(t, run_id, set())
        if during is not None:
            self._job_dispatched(t, during, t_back, 30.0, timed=False, must_succeed=True)

    def postgres_hang(self, t: Tally, i: int) -> None:
        """PostgreSQL hung (SIGSTOP of the postmaster and every backend) for --hang-s during a run, then SIGCONT.
        No request waits on it longer than a short timeout (503 with Retry-After instead), health says the
        database is not answering, the runner measures on into its spool, and the run ends at attempt 1 with every
        sample stored once."""
        self.wait_online()
        pg = self.stack.pg
        assert pg is not None and pg.proc is not None
        run_id = self.job(self.hang_s + 8)
        if self.wait(run_id, {"running"}, 30) is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} never started")
            return
        time.sleep(self.rng.uniform(0.5, 2.0))
        family = self._family(pg.proc.pid)
        self._freeze(family, signal.SIGSTOP)
        t_stop = time.monotonic()
        try:
            seen = self._hang_probe(t, t_stop + self.hang_s, "database", t_stop)
        finally:
            self._freeze(family, signal.SIGCONT)
        t_back = time.monotonic()
        end = self.wait(run_id, TERMINAL, 60)
        t.notes.append(f"run {run_id}: during the hang {seen}")
        if end is None or end["status"] != "succeeded" or end["attempt"] != 1:
            t.stuck += 1
            t.notes.append(f"run {run_id}: " + ("not terminal 60 s after PostgreSQL resumed" if end is None else
                                               f"{end['status']} at attempt {end['attempt']}: {end['status_reason']}"))
        else:
            t.resolve_s.append(time.monotonic() - t_back)
        self.ledger(t, run_id, set())

    def beat_stop(self, t: Tally, i: int) -> None:
        """Celery beat hung (SIGSTOP) and, meanwhile, the runner frozen mid-run: the run's lease must still be
        expired (the reconciler does not depend on beat alone) within the lease + the reconcile period + 3 s, and
        health must say beat's schedule is not running. Both are resumed afterwards."""
        self.wait_online()
        beat = self.stack.children["beat"]
        assert beat.proc is not None and self.runner.proc is not None
        run_id = self.job(25)
        if self.wait(run_id, {"running"}, 30) is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} never started")
            return
        beat_family = self._family(beat.proc.pid)
        self._freeze(beat_family, signal.SIGSTOP)
        t_stop = time.monotonic()
        runner_pid = self.runner.proc.pid
        kernels = self.kernels_of(runner_pid)
        try:
            time.sleep(self.rng.uniform(0.2, 1.0))
            self._freeze([runner_pid], signal.SIGSTOP)
            t_frozen = time.monotonic()
            try:
                end = self.wait(run_id, TERMINAL, LEASE_S + RECONCILE_S + 3)
                resolved = time.monotonic() - t_frozen
                deadline = t_stop + max(HEALTH_NOTICE_S, 3 * RECONCILE_S) + 2
                said = None
                while time.monotonic() < deadline:
                    said = self.http.get("/api/health", timeout=10).json().get("scheduler")
                    time.sleep(0.5)
                if said is None or said == "ok":
                    t.bad_answers += 1
                    t.notes.append(f"health still said the scheduler was ok {deadline - t_stop:.0f} s into beat's hang")
            finally:
                self._freeze([runner_pid], signal.SIGCONT)
        finally:
            self._freeze(beat_family, signal.SIGCONT)
        if end is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} still {self.run(run_id)['status']} {resolved:.0f} s after its runner froze "
                           f"with beat hung")
        else:
            t.resolve_s.append(resolved)
            t.notes.append(f"run {run_id}: {end['status']} {resolved:.1f} s after its runner froze: "
                           f"{end['status_reason']}; health said scheduler={said!r}")
        deadline = time.monotonic() + 2 + LEASE_S / 3
        while any(_alive(k) for k in kernels) and time.monotonic() < deadline:
            time.sleep(0.05)
        t.kernels_left += sum(1 for k in kernels if _alive(k))
        self.wait_online()
        self.ledger(t, run_id, set())

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


SCENARIOS = {"runner-kill": Trials.runner_kill, "idle-runner-kill": Trials.idle_runner_kill,
             "runner-stop": Trials.runner_stop,
             "worker-kill": Trials.worker_kill, "beat-kill": Trials.beat_kill,
             "redis-kill": Trials.redis_kill, "postgres-stop": Trials.postgres_stop,
             "redis-stop": Trials.redis_stop, "postgres-hang": Trials.postgres_hang, "beat-stop": Trials.beat_stop,
             "api-kill": Trials.api_kill, "partition": Trials.partition, "spool-full": Trials.spool_full}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trials", type=int, default=3, help="trials per scenario (default 3)")
    p.add_argument("--scenario", action="append", choices=sorted(SCENARIOS), default=[],
                   help="run only these scenarios; repeatable")
    p.add_argument("--seed", type=int, default=None, help="seed for the fault moments")
    p.add_argument("--pg-outage-s", type=float, default=20.0,
                   help="how long postgres-stop keeps PostgreSQL down (default 20 s)")
    p.add_argument("--redis-outage-s", type=float, default=20.0,
                   help="how long redis-kill keeps Redis down (default 20 s)")
    p.add_argument("--partition-s", type=float, default=10.0,
                   help="how long partition cuts the runner's link (default 10 s; odd trials 6 times as long)")
    p.add_argument("--hang-s", type=float, default=20.0,
                   help="how long redis-stop, postgres-hang and beat-stop keep a part hung (default 20 s)")


def run(args: argparse.Namespace) -> int:
    names = args.scenario or list(SCENARIOS)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    STATE.mkdir(exist_ok=True)
    state = Path(tempfile.mkdtemp(prefix="chaos-", dir=STATE))
    # durable: the production settings (fsync, synchronous commit), which the postgres-stop scenario relies on
    stack = Stack(state, durable=True, runner_name="chaos-a", database="hostbench_chaos", fresh_database=True,
                  extra_env={"LEASE_S": str(LEASE_S), "RECONCILE_S": str(RECONCILE_S),
                             "RUNNER_HEARTBEAT_BUSY_S": str(HEARTBEAT_S), "RUNNER_HEARTBEAT_IDLE_S": str(HEARTBEAT_S)})
    tallies = {n: Tally() for n in names}
    t0 = time.monotonic()
    ns, ns_why = None, ""
    spool_mount: Path | None = None
    if "partition" in names:  # a third host behind a link the trial can cut: a network namespace
        ns_why = netns.available() or ""
        if not ns_why:
            try:
                outer, inner = netns.free_pair(170, 200)
                ns = Netns(f"hbchaos{os.getpid() % 100000}", outer, inner).create()
                stack.bind = "0.0.0.0"  # noqa: S104 - the namespace reaches the API at the veth address
            except RuntimeError as exc:
                ns_why = str(exc)
    try:
        stack.start(timeout=120)
        stack.start_runner("runner-b", state / "runner-b", {"HOSTBENCH_RUNNER_NAME": "chaos-b"})
        if ns is not None:
            stack.start_runner("runner-c", state / "runner-c", {
                "HOSTBENCH_RUNNER_NAME": "chaos-c", "HOSTBENCH_SERVER": f"http://{ns.outer_ip}:{stack.port}"},
                prefix=["ip", "netns", "exec", ns.name])
        if "spool-full" in names:
            spool_mount, spool_why = _small_tmpfs(state / "runner-d" / "spool", "2m")
            if spool_mount is not None:
                stack.start_runner("runner-d", state / "runner-d", {"HOSTBENCH_RUNNER_NAME": "chaos-d"})
        stack.wait_healthy(60, runners=2 + (ns is not None) + (spool_mount is not None))
        trials = Trials(stack, random.Random(seed))  # noqa: S311 - seeded fault timing, reproducible; not crypto
        trials.ns, trials.ns_why = ns, ns_why
        trials.spool_mount, trials.spool_why = spool_mount, spool_why
        trials.partition_s = args.partition_s
        trials.pg_outage_s = args.pg_outage_s
        trials.redis_outage_s = args.redis_outage_s
        trials.hang_s = args.hang_s
        for name in names:
            for i in range(args.trials):
                tallies[name].trials += 1
                SCENARIOS[name](trials, tallies[name], i)
    except (RuntimeError, httpx.HTTPError) as exc:
        print(f"chaos: the stack failed: {exc} (logs in {stack.logs})", flush=True)
        _report(tallies, seed, time.monotonic() - t0, error=str(exc))
        return 1
    finally:
        stack.stop()
        if ns is not None:
            ns.destroy()
        if spool_mount is not None:
            subprocess.run(["umount", str(spool_mount)], check=False, capture_output=True)
    ok = _report(tallies, seed, time.monotonic() - t0)
    return 0 if ok else 1


def _report(tallies: dict[str, Tally], seed: int, took_s: float, error: str | None = None) -> bool:
    head = f"{'scenario':18s} {'trials':>6s} {'lost':>5s} {'dup':>4s} {'stuck':>5s} {'kernels':>7s} " \
           f"{'dead claims':>11s} {'bad answers':>11s} {'p50 s':>6s} {'max s':>6s}"
    print(head)
    print("-" * len(head))
    for name, t in tallies.items():
        r = t.row()
        fmt = lambda v: "-" if v is None else f"{v:.1f}"  # noqa: E731
        print(f"{name:18s} {r['trials']:6d} {r['lost']:5d} {r['duplicated']:4d} {r['stuck']:5d} "
              f"{r['kernels_left']:7d} {r['dead_claims']:11d} {r['bad_answers']:11d} {fmt(r['resolve_p50_s']):>6s} "
              f"{fmt(r['resolve_max_s']):>6s}")
        for note in t.notes[:10]:
            print(f"    {note}")
    ok = error is None and all(t.ok for t in tallies.values())
    print(f"resolve = seconds from the fault (runner-kill; runner-stop: to SIGCONT, once the server failed the "
          f"run) or from the runner's return (idle-runner-kill) to the "
          f"run's end; from the kill to the run's start (worker-kill, beat-kill); for worker-kill 'kernels' counts "
          f"pool processes that outlived their worker; from Redis's return to the next job's start (redis-kill); "
          f"from PostgreSQL's return to the run's end (postgres-stop); "
          f"lease {LEASE_S:.0f} s, reconcile every {RECONCILE_S:.0f} s; "
          f"seed {seed}; {took_s:.0f} s")
    line = {"chaos": {n: t.row() for n, t in tallies.items()}, "seed": seed, "ok": ok}
    if error:
        line["error"] = error
    print(json.dumps(line), flush=True)
    return ok
