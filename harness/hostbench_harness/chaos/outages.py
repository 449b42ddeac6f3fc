"""The shared parts away: Redis and PostgreSQL killed or stopped, and Redis, PostgreSQL and beat hung (SIGSTOP)."""
import os
import signal
import time

from hostbench_common.runstatus import RunStatus

from hostbench_harness.chaos.base import (
    HANG_ANSWER_S,
    HEALTH_NOTICE_S,
    LEASE_S,
    RECONCILE_S,
    TERMINAL,
    Tally,
    TrialsBase,
    _alive,
)


class OutageTrials(TrialsBase):
    def postgres_stop(self, t: Tally, i: int) -> None:
        """PostgreSQL stopped at once (SIGQUIT: no checkpoint, as a crash) during a run and started again
        PG_OUTAGE_S later. The API answers 503 with Retry-After meanwhile, never a 500 and never slowly; the runner
        measures on into its spool; the run is not failed by an outage shorter than the runner's grace; its
        backlog is stored once PostgreSQL is back, every sample exactly once."""
        self.wait_online()
        pg = self.stack.pg
        assert pg is not None and pg.proc is not None
        run_id = self.job(self.pg_outage_s + 5)
        if self.wait(run_id, {RunStatus.running}, 30) is None:
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
        if end["status"] != RunStatus.succeeded or end["attempt"] != 1:
            t.stuck += 1  # a run the outage failed or restarted
            t.notes.append(f"run {run_id}: {end['status_reason']}")
        self.ledger(t, run_id, set())

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
                    self.run(during)["status"] in {RunStatus.running, *TERMINAL}:
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

    def redis_stop(self, t: Tally, i: int) -> None:
        """Redis hung (SIGSTOP) for --hang-s during a run, then SIGCONT. A job is still accepted at once
        (PostgreSQL is the truth; Redis only rings), no request waits on Redis longer than a short timeout, health
        says the broker is not answering, the running benchmark is not disturbed (its uploads do not wait on the
        live fan-out), and the job created meanwhile runs once Redis answers again."""
        self.wait_online()
        redis = self.stack.redis
        assert redis is not None and redis.proc is not None
        run_id = self.job(self.hang_s + 4)
        if self.wait(run_id, {RunStatus.running}, 30) is None:
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
        if end is None or end["status"] != RunStatus.succeeded or end["attempt"] != 1:
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
        run_id = self.job(self.hang_s + 5)
        if self.wait(run_id, {RunStatus.running}, 30) is None:
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
        if end is None or end["status"] != RunStatus.succeeded or end["attempt"] != 1:
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
        if self.wait(run_id, {RunStatus.running}, 30) is None:
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
