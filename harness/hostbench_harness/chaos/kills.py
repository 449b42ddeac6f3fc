"""Processes killed or frozen: the runner (busy and idle), the Celery worker and beat, the whole API."""
import json
import os
import signal
import threading
import time

import httpx
from hostbench_common.runstatus import RunStatus

from hostbench_harness.chaos.base import LEASE_S, RECONCILE_S, RESTART_S, TERMINAL, Tally, TrialsBase, _alive


class KillTrials(TrialsBase):
    def runner_kill(self, t: Tally, i: int) -> None:
        self.wait_online()
        run_id = self.job(8)
        if self.wait(run_id, {RunStatus.running}, 30) is None:
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
        if end["status"] != RunStatus.succeeded or end["attempt"] != 1:
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
        if self.wait(run_id, {RunStatus.running}, 30) is None:
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
        if end["status"] != RunStatus.failed:
            t.notes.append(f"run {run_id}: {end['status']} while its runner was stopped: {end['status_reason']}")
        t.notes.append(f"run {run_id}: {end['status']} after {t_cont - t_stop:.1f} s stopped; kernel gone "
                       f"{gone_s:.1f} s after SIGCONT")
        self.wait_online()
        self.ledger(t, run_id, set())

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
                                if not json.loads(data).get("samples_complete", True):
                                    log.append("the stream ended before the runner said it had sent every sample")
                                return
                            event, data, eid = "", "", None
            except (httpx.HTTPError, ValueError) as exc:
                log.append(f"stream broke: {type(exc).__name__}")
            time.sleep(0.5)

    def api_kill(self, t: Tally, i: int) -> None:
        """`kill -9` of the API (the dashboard's and the runners' processes, each whole process group) while a
        browser-like client follows a run's live stream, then the API started again at once, as `./hostbench up`'s
        supervisor does. The client resumes with Last-Event-ID: it must end with every stored sample exactly once,
        in order (0 gaps, 0 duplicates), and the run must end; whether the run survives depends on how long the
        API was away against the runner's fence (2 s in this profile), so either end is accepted if the ledger
        holds."""
        self.wait_online()
        run_id = self.job(10)
        if self.wait(run_id, {RunStatus.running}, 30) is None:
            t.stuck += 1
            t.notes.append(f"run {run_id} never started")
            return
        got: list[int] = []
        log: list[str] = []
        stop = threading.Event()
        follower = threading.Thread(target=self._follow, args=(run_id, got, log, stop), daemon=True)
        follower.start()
        time.sleep(self.rng.uniform(1.0, 4.0))
        apis = [self.stack.children["api"]]  # the supervisor of the dashboard's and the runners' API processes
        for api in apis:
            assert api.proc is not None
            os.killpg(api.proc.pid, signal.SIGKILL)
        for api in apis:
            assert api.proc is not None
            api.proc.wait(10)
        t_kill = time.monotonic()
        time.sleep(0.5)
        for api in apis:
            api.start()
        self.stack.wait_healthy()
        back = time.monotonic() - t_kill
        end = self.wait(run_id, TERMINAL, 60)
        follower.join(45)  # the stream's `end` waits for the runner's last samples (app.live.router, CLOSE_WAIT_S)
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
