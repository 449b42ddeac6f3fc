"""A runner's host in trouble: its network cut (a partition) and its spool's disk full."""
import time

from hostbench_common.runstatus import RunStatus

from hostbench_harness.chaos.base import LEASE_S, RECONCILE_S, SPOOL_FULL_LIMIT_S, TERMINAL, Tally, TrialsBase, _alive


class HostTrials(TrialsBase):
    def partition(self, t: Tally, i: int) -> None:
        """The runner of host chaos-c lives in a network namespace (another host, as far as the network goes). Its
        link is cut for --partition-s (10 s; odd trials 60 s) mid-run, then restored. The runner must stop its
        kernel by its own fence (it cannot know whether the server gave its lease away), the server must end the
        run once the lease ran out, and once the link is back the runner must come back online on its own and run
        the next job, at attempt 1, with every sample stored once."""
        if self.ns is None or self.host_c is None:
            t.trials -= 1  # not run: the row shows 0 trials and says why, never a pass
            t.notes.append(f"skipped: {self.ns_why}")
            return
        runner = self.stack.children["runner-c"]
        self.wait_online(self.host_c, runner)
        run_id = self.job_for(self.host_c, 30)
        if self.wait(run_id, {RunStatus.running}, 30) is None:
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

    def spool_full(self, t: Tally, i: int) -> None:
        """Host chaos-d's runner keeps its spool on a 2-MiB tmpfs the trial mounted. Mid-run the trial fills it (a
        filler file, until ENOSPC). A sample that cannot be kept must not be measured on: the run must end
        promptly as failed with the real reason (the spool could not be written), not as a silent runner, with
        every sample it did keep stored once; once the filler is gone the runner must run the next job."""
        if self.spool_mount is None or self.host_d is None:
            t.trials -= 1  # not run: the row shows 0 trials and says why, never a pass
            t.notes.append(f"skipped: {self.spool_why}")
            return
        runner = self.stack.children["runner-d"]
        self.wait_online(self.host_d, runner)
        before = i % 2 == 1  # odd trials: the disk is full before the run arrives
        filler = self.spool_mount / "filler"
        if not before:
            run_id = self.job_for(self.host_d, 60)
            if self.wait(run_id, {RunStatus.running}, 30) is None:
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
            if end["status"] != RunStatus.failed or "spool" not in reason:
                t.stuck += 1  # the wrong end, or the wrong reason ("runner went silent")
            t.notes.append(f"run {run_id} ({'disk full before it' if before else 'disk filled mid-run'}): "
                           f"{end['status']} {ended_s:.1f} s after: {reason[:90]}")
        self.ledger(t, run_id, set())
        after = self.job_for(self.host_d, 3)  # space is back: the runner must work again
        self._job_dispatched(t, after, time.monotonic(), 30.0, timed=False, must_succeed=True)
