"""The runner daemon: one explicit state machine in one loop.

    idle ──► claiming ──► running ──► finishing ──► idle
      ▲          │ 204/error             ▲   │ ▲
      └──────────┘          refused ─────┘   ▼ │  the kernel succeeded and params.reference:
                (bad params, no kernel)   referencing  the reference tools, one at a time

Signal handlers only set flags; the loop notices them. Around the loop run three small threads:
the heartbeat (every 5 s, idle or busy), the uploader (spool → server) and, while a run is on,
its lease keeper (every 5 s; a 409 or 30 s without renewal stops the kernel). The lease is held
until the server has the finish (the uploader stops the keeper then), through the reference tools
(referencing.py, hostbench_common.reftools) if any run. A two-host
serve run reports its kernel's port, and if it asked for references also keeps reference servers for its peer
(peer.py) from the kernel's `listening` until the run ends, however it ends. The heartbeat, the long poll and the
lease keeper are in keepalive.py, one run's state in runstate.py, what happens before the loop in startup.py.
"""

from __future__ import annotations

import enum
import logging
import math
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from hostbench_common.experiments import DISK_TARGET_WORK, RUNS, kernels_needed
from hostbench_common.runstatus import RunStatus

from . import credential, inventory, startup
from .api import ApiClient, Backoff
from .cgroupquota import cpu_quota
from .config import Settings
from .errors import ConfigError, KernelUnavailable, ParamError, ProtocolError, Retryable, Unauthorized
from .keepalive import Claim, Heartbeat, LeaseKeeper, lease_timing
from .kernel import KernelCatalog, KernelProcess
from .peer import servers_dir
from .probing import BackgroundProbe
from .protocol import Stream, sample_for_api
from .runstate import Run, cap, kernel_verdict
from .spool import Spool, check_run_key
from .uploader import Uploader

log = logging.getLogger("hostbench.daemon")

EXIT_OK, EXIT_ERROR, EXIT_CONFIG, EXIT_REVOKED = 0, 1, 2, 3
EXIT_NO_WORK = 4  # --once: no work came within --once-wait
STOPPED_REASON = "runner stopped"


class State(enum.Enum):
    IDLE = "idle"
    CLAIMING = "claiming"
    RUNNING = "running"
    REFERENCING = "referencing"
    FINISHING = "finishing"


class Daemon:
    def __init__(self, settings: Settings, api: ApiClient | None = None):
        self.s = settings
        self.api = api or ApiClient(settings.server, timeout_s=settings.http_timeout_s)
        self.shutdown = threading.Event()
        self.force = threading.Event()
        self.revoked = threading.Event()
        self.catalog = KernelCatalog(settings.kernel_bin, settings.describe_timeout_s, settings.kernel_looked)
        self.credential: credential.Credential | None = None
        self.uploader = Uploader(self.api, settings, self.revoked)
        self.heartbeat: Heartbeat | None = None
        self.probe: BackgroundProbe | None = None
        self.inventory: dict[str, Any] | None = None
        self.state = State.IDLE
        self.run: Run | None = None
        self._claim: Claim | None = None
        self._abandoned_claim: Claim | None = None
        self._claim_backoff = Backoff(settings.backoff_base_s, settings.backoff_cap_s)
        self._idle_until = 0.0
        self._claim_started = 0.0
        self._backlog_until: float | None = None
        self._shutdown_at: float | None = None
        # --once: when it joined, how many runs it finished and when the last ended; the exit code once it leaves
        self._joined_at = 0.0
        self._runs_done = 0
        self._last_done_at = 0.0
        self._once_exit: int | None = None

    # --- signals: flags only ---------------------------------------------------------------

    def install_signal_handlers(self) -> None:
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self.shutdown.is_set():
            self.force.set()
        self.shutdown.set()

    # --- process life ----------------------------------------------------------------------

    def main(self) -> int:
        try:
            if self.s.register_only:
                return self.register_only()
            self.prepare()
            return self.loop()
        except ConfigError as exc:
            log.error("configuration: %s", exc)
            return EXIT_CONFIG
        except Unauthorized as exc:
            log.error("%s", exc)
            return EXIT_REVOKED
        except Retryable as exc:  # registration interrupted by a signal while the server was down
            log.error("stopped before the server could be reached: %s", exc)
            return EXIT_OK if self.shutdown.is_set() else EXIT_ERROR
        finally:
            self.close()

    def prepare(self) -> None:
        for d in (self.s.state_dir, self.s.spool_dir, self.s.work_dir):
            d.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.clean_work_dir()
        self.catalog.load(kernels_needed())
        # the FMA probe it kept, if any: a new one is taken after registration (probing.BackgroundProbe)
        self.inventory = inventory.collect("/", kernel_info=self.catalog.build_info, work_dir=self.s.work_dir,
                                           kernel_bin=self.s.kernel_bin if self.s.fma_probe else None,
                                           probe_cache=self.s.probe_cache, disk_targets=self.s.disk_targets,
                                           probe_now=False)
        cred = credential.obtain(
            self.s.credential_path, self.api, self.s.registration_token, self.s.name, self.s.labels,
            self.inventory, self.shutdown, Backoff(self.s.backoff_base_s, self.s.backoff_cap_s),
        )
        self.api.set_token(cred.runner_token)
        self.credential = cred
        self.recover_spools()
        self.uploader.start()
        self.heartbeat = Heartbeat(self.api, self.s.heartbeat_s, self.inventory, self.current_run, self.revoked,
                                   rotate=self.rotate_credential)
        self.heartbeat.start()
        self.probe = BackgroundProbe.plan(self.s.kernel_bin if self.s.fma_probe else None, self.inventory,
                                          self.s.probe_cache, self._probed)
        if self.probe is not None:
            self.probe.start()
        self._backlog_until = time.monotonic() + self.s.backlog_wait_s
        self._joined_at = time.monotonic()
        log.info("runner ready: host_id=%s name=%s server=%s%s", cred.host_id, self.s.name, self.s.server,
                 " (one-shot)" if self.s.once else "")

    def _probed(self, probe: dict[str, Any]) -> None:
        """A background FMA probe that says more than the one registered with: into the inventory, which a heartbeat
        sends at once (the server then infers the peak from it)."""
        cpu = (self.inventory or {}).get("cpu")
        if isinstance(cpu, dict) and self.inventory is not None:
            cpu["fma_probe"] = probe
            if self.heartbeat is not None:
                self.heartbeat.send_inventory(self.inventory)

    def register_only(self) -> int:
        """--register-only: register (or, with a stored credential, check the server accepts it) and exit."""
        self.inventory = startup.register_only(self.s, self.api, self.catalog, self.shutdown)
        return EXIT_OK

    def rotate_credential(self) -> None:
        """The server asked for a new credential (startup.rotated): stored, then used; else the old one stays."""
        if self.credential is not None:
            self.credential = startup.rotated(self.s, self.api, self.credential) or self.credential

    def close(self) -> None:
        if self.heartbeat is not None:
            self.heartbeat.stop()
        self.uploader.stop(timeout_s=2.0)
        self.api.close()

    def clean_work_dir(self) -> None:
        startup.clean_work_dir(self.s.work_dir)
        startup.clean_disk_targets(self.s.disk_targets)

    def disk_target(self, exp: Any, params: Any, key: str) -> Path | None:
        """A fresh directory for the run on the disk target its job names (the name mapped to the path this
        runner was configured with; never a path from the assignment), or None: the run's own work dir."""
        name = params.get("target", DISK_TARGET_WORK) if isinstance(params, dict) else DISK_TARGET_WORK
        if "target" not in exp.runner_params or name == DISK_TARGET_WORK:
            return None
        base = self.s.disk_targets.get(name) if isinstance(name, str) else None
        if base is None:
            raise ParamError(f"target: {str(name)[:40]!r} is not a disk target of this runner (it has: "
                             f"{', '.join([DISK_TARGET_WORK, *self.s.disk_targets])})")
        return base / f"{startup.TARGET_RUN_PREFIX}{key}"

    def recover_spools(self) -> None:
        for spool in startup.recover_spools(self.s.spool_dir):
            self.uploader.add(spool)

    def current_run(self) -> dict[str, Any] | None:
        run = self.run
        return None if run is None else {"run_id": run.run_id, "attempt": run.attempt}

    # --- the loop --------------------------------------------------------------------------

    def loop(self) -> int:
        while True:
            if self.revoked.is_set():
                return self._exit_revoked()
            if self.shutdown.is_set() and self._shutdown_at is None:
                self._shutdown_at = time.monotonic()
                log.info("shutdown requested (state %s)", self.state.value)
            if self.state is State.IDLE and self.shutdown.is_set():
                code = self._exit_shutdown()
                return code if self._once_exit is None else self._once_exit
            try:
                self.step()
            except Exception as exc:  # a bug or a full disk must not leave a kernel running unwatched
                self._recover(exc)

    def _recover(self, exc: Exception) -> None:
        log.exception("runner error in state %s: %s", self.state.value, exc)
        run, self.run = self.run, None
        self._claim = None
        self.state = State.IDLE
        self._idle_until = time.monotonic() + self._claim_backoff.next_delay()
        if run is None:
            return
        if run.lease is not None:
            run.lease.stop()
        run.peer.stop_reporting()
        run.peer.stop_servers(run.run_id)
        if run.kernel is not None:
            run.kernel.kill()
            run.kernel.wait(self.s.kill_grace_s)
            run.kernel.close()
        run.refs.close()
        try:
            run.spool.set_finish({
                "attempt": run.attempt, "status": RunStatus.failed,
                "reason": cap(f"runner error: {type(exc).__name__}: {exc}"),
                "results": run.stream.results, "end": run.stream.end,
            })
            self.uploader.kick()
        except OSError as write_exc:
            log.error("cannot spool the finish of run=%s: %s", run.run_id, write_exc)

    def step(self) -> None:
        before = self.state
        if self.state is State.IDLE:
            self._step_idle()
        elif self.state is State.CLAIMING:
            self._step_claiming()
        elif self.state is State.RUNNING:
            self._step_running()
        elif self.state is State.REFERENCING:
            self._step_referencing()
        elif self.state is State.FINISHING:
            self._step_finishing()
        if self.state is not before:
            log.debug("state %s -> %s", before.value, self.state.value)

    def execute(self, assignment: Any) -> None:
        """Run one assignment from claimed to finished (the loop's path, without the long poll)."""
        self._begin(assignment)
        while self.state is not State.IDLE:
            if self.revoked.is_set():
                self._abort_for_revocation()
                return
            self.step()

    def _step_idle(self) -> None:
        now = time.monotonic()
        if self.probe is not None and self.probe.wanted.is_set():
            self.shutdown.wait(0.2)  # the FMA probe runs: no run of ours beside it (probing.py)
            return
        if self._backlog_until is not None:
            if self.uploader.idle() or now >= self._backlog_until:
                if not self.uploader.idle():
                    log.warning("backlog not yet uploaded; taking new work while it continues")
                self._backlog_until = None
            else:
                self.shutdown.wait(0.1)
                return
        if now < self._idle_until:
            self.shutdown.wait(min(0.2, self._idle_until - now))
            return
        if self.s.once and self._once_done(now):
            return
        self._claim = Claim(self.api, self.s.poll_wait_s)
        self._claim_started = now
        self.state = State.CLAIMING

    def _step_claiming(self) -> None:
        assert self._claim is not None
        result = self._claim.poll(0.2)
        if result is None:
            if self.shutdown.is_set():
                self._abandoned_claim, self._claim = self._claim, None
                self.state = State.IDLE
            return
        self._claim = None
        kind, value = result
        if kind == "error":
            if isinstance(value, Unauthorized):
                log.error("work poll refused: %s", value)
                self.revoked.set()
            else:
                delay = self._claim_backoff.next_delay(getattr(value, "retry_after", None))
                log.warning("work poll failed, retry in %.1fs: %s", delay, value)
                self._idle_until = time.monotonic() + delay
            self.state = State.IDLE
            return
        self._claim_backoff.reset()
        if value is None:
            # A server that answers 204 at once (no long poll) must not make this loop spin.
            self._idle_until = self._claim_started + 1.0
            self.state = State.IDLE
            return
        self._begin(value)

    def _once_done(self, now: float) -> bool:
        """--once: leave (a shutdown, which uploads what is spooled first) when a run was done and no work followed
        for once_idle_s, or when none came within once_wait_s of joining (exit 4)."""
        if self._runs_done and now - self._last_done_at >= self.s.once_idle_s and self.uploader.idle():
            log.info("one-shot: %d run(s) done, no more work for %.0f s: leaving", self._runs_done,
                     now - self._last_done_at)
            self._once_exit = EXIT_OK
        elif not self._runs_done and now - self._joined_at >= self.s.once_wait_s:
            log.error("one-shot: no work came within %.0f s of joining: leaving", self.s.once_wait_s)
            self._once_exit = EXIT_NO_WORK
        else:
            return False
        self.shutdown.set()
        return True

    # --- claimed → running -----------------------------------------------------------------

    def _begin(self, assignment: Any) -> None:
        try:
            run_id, attempt = assignment["run_id"], assignment["attempt"]
            check_run_key(run_id, attempt)
        except (TypeError, KeyError, ValueError) as exc:
            log.error("assignment without a usable run_id/attempt ignored: %s", exc)
            self.state = State.IDLE
            return
        experiment = assignment.get("experiment")
        spool = Spool.create_or_volatile(self.s.spool_dir, run_id, attempt,
                                         experiment if isinstance(experiment, str) else None)
        self.uploader.add(spool)
        deadline_s = assignment.get("deadline_s")
        deadline_ok = (isinstance(deadline_s, (int, float)) and not isinstance(deadline_s, bool)
                       and math.isfinite(deadline_s) and deadline_s > 0)
        run = Run(run_id=run_id, attempt=attempt, experiment=experiment, spool=spool,
                  deadline_s=float(deadline_s) if deadline_ok else 0.0,
                  deadline_at=time.monotonic() + (float(deadline_s) if deadline_ok else 0.0))
        self.run = run
        log.info("claimed run=%s attempt=%s experiment=%r deadline_s=%s",
                 run_id, attempt, experiment, deadline_s)
        self.state = State.FINISHING
        if self.shutdown.is_set():
            run.outcome = (RunStatus.failed, STOPPED_REASON)
            return
        if spool.volatile:  # the disk refused the spool: nothing may be measured that cannot be kept
            run.outcome = (RunStatus.failed, cap(spool.write_error or "cannot write the spool"))
            return
        try:
            exp = RUNS.get(experiment) if isinstance(experiment, str) else None
            if exp is None:
                raise ParamError(f"unknown experiment {experiment!r} (this runner runs: {', '.join(RUNS)})")
            if not deadline_ok:
                raise ParamError(f"deadline_s must be a positive number, got {deadline_s!r}")
            target_dir = self.disk_target(exp, assignment.get("params"), spool.key)
            kernel_params = exp.kernel_params(assignment.get("params"), self.catalog.schema(exp.kernel),
                                              deadline_s=float(deadline_s),
                                              workdir=None if target_dir is None else str(target_dir))
            argv = exp.argv(self.s.kernel_bin, kernel_params)
            run.kernel_params = kernel_params
            run.refs.wanted = exp.wants_reference(assignment["params"])
            run.refs.ports = dict(assignment["params"].get("reference_ports") or {})
            run.refs.options = {k: assignment["params"][k] for k in exp.runner_params if k in assignment["params"]}
        except ParamError as exc:
            log.error("run=%s refused: invalid params: %s", run_id, exc)
            run.outcome = (RunStatus.failed, cap(f"invalid params: {exc}"))
            return
        except KernelUnavailable as exc:
            log.error("run=%s refused: %s", run_id, exc)
            run.outcome = (RunStatus.failed, cap(f"kernel unavailable: {exc}"))
            return
        run.work_dir = self.s.work_dir / spool.key
        run.target_dir = target_dir
        shutil.rmtree(run.work_dir, ignore_errors=True)
        try:
            run.work_dir.mkdir(parents=True, mode=0o700)
            if run.target_dir is not None:
                shutil.rmtree(run.target_dir, ignore_errors=True)
                run.target_dir.mkdir(mode=0o700)
            run.kernel = KernelProcess(argv, run.work_dir)
        except (OSError, subprocess.SubprocessError) as exc:
            log.error("run=%s: cannot start the kernel: %s", run_id, exc)
            run.outcome = (RunStatus.failed, cap(f"cannot start the kernel: {exc}"))
            return
        run.stream = Stream(max_samples=int(run.deadline_s * 10) + 100)
        renew_s, fence_s = lease_timing(assignment.get("lease_s"), self.s.lease_renew_s, self.s.lease_lost_after_s)
        run.lease = LeaseKeeper(self.api, run_id, attempt, renew_s, fence_s, self.revoked, self.s.db_outage_grace_s)
        run.lease.start()
        op = (run.kernel_params or {}).get("op")
        run.lease.report({"kind": "kernel", "tool": None, "started_at": round(time.time(), 3),
                          "what": f"{run.experiment} kernel" + (f", {op}" if isinstance(op, str) else "")})
        log.info("kernel started run=%s pid=%d argv=%s", run_id, run.kernel.pid, " ".join(argv[1:]))
        self.state = State.RUNNING

    # --- running ---------------------------------------------------------------------------

    def _stop_reason(self, run: Run) -> tuple[str | None, str] | None:
        """(status, reason) to stop the kernel with; status None = the server decided, no finish."""
        if self.shutdown.is_set():
            return (RunStatus.failed, STOPPED_REASON)
        return run.stop_reason(time.monotonic())

    def _stop_kernel(self, run: Run, status: str | None, reason: str) -> None:
        assert run.kernel is not None
        if status is None:
            run.skip_finish = run.skip_finish or reason
        elif run.outcome is None and run.protocol_error is None:
            run.outcome = (status, cap(reason))
        log.warning("stopping kernel of run=%s pid=%d: %s", run.run_id, run.kernel.pid, reason)
        if self.force.is_set():
            run.kernel.kill()
        run.kernel.request_stop(self.s.kill_grace_s)

    def _step_running(self) -> None:
        run = self.run
        assert run is not None and run.kernel is not None
        kernel = run.kernel
        if not kernel.stopping:
            why = self._stop_reason(run)
            if why is not None:
                self._stop_kernel(run, *why)
        else:
            if self.force.is_set():
                kernel.kill()
            kernel.poll_stop()
        for line in kernel.read_lines(0.2):
            self._handle_line(run, line)
        if kernel.stdout_eof:
            kernel.wait(self.s.kill_grace_s)
            self.state = State.FINISHING
        elif kernel.returncode is not None:
            # Exited, yet stdout is still open: a child of the kernel holds it. Give it 2 s.
            if run.exited_at is None:
                run.exited_at = time.monotonic()
            elif time.monotonic() - run.exited_at > 2.0:
                kernel.kill()

    def _handle_line(self, run: Run, line: bytes) -> None:
        if run.protocol_error is not None:
            return
        try:
            event = run.stream.feed(line)
        except ProtocolError as exc:
            if run.kernel is not None and run.kernel.stopping:
                log.warning("run=%s: ignoring output of the stopping kernel: %s", run.run_id, exc)
                return
            run.protocol_error = str(exc)
            log.error("run=%s: kernel protocol error: %s", run.run_id, exc)
            if run.kernel is not None:
                run.kernel.request_stop(self.s.kill_grace_s)
            return
        kind = event["type"]
        try:
            if kind == "sample":
                # Durable first, then sent (docs/reliability.md, rule 5).
                run.spool.append_sample(sample_for_api(event))
                self.uploader.kick()
            elif kind == "start":
                # the CPU time the host's own cgroup allows the kernel (its capacity, not a disturbance)
                quota = cpu_quota(event["pid"] if isinstance(event.get("pid"), int) else "self")
                run.spool.set_start({**event, "cpu_quota": quota} if quota is not None else event)
                self.uploader.kick()
                log.info("run=%s kernel start: kernel=%s unit=%s", run.run_id, event.get("kernel"), event.get("unit"))
            elif kind == "result":
                run.spool.append_result(event)
            elif kind == "listening" and run.peer.listening is None:
                log.info("run=%s kernel listening on %s port %d", run.run_id, event.get("bind"), event["port"])
                run.peer.kernel_listens(
                    self.api, run.run_id, run.attempt, event["port"],
                    Backoff(self.s.backoff_base_s, self.s.backoff_cap_s), self.s.lease_lost_after_s, self.revoked,
                    op=str((run.kernel_params or {}).get("op")),
                    servers_dir=servers_dir(run.experiment, run.refs.wanted, run.work_dir, run.kernel_params))
            elif kind == "served":
                log.info("run=%s server stopped: %s; sessions=%s refused=%s bytes=%s", run.run_id,
                         event["stopped"], event["sessions"], event["refused"], event["bytes_received"])
        except OSError as exc:  # disk full: a sample we cannot keep must not be measured on
            log.error("run=%s: cannot write the spool: %s", run.run_id, exc)
            if run.kernel is not None and not run.kernel.stopping:
                self._stop_kernel(run, RunStatus.failed, f"cannot write the spool: {exc}")
            return
        if kind == "end":
            log.info("run=%s kernel end: status=%s samples=%s", run.run_id, event["status"], event.get("samples"))
        elif kind == "error":
            log.warning("run=%s kernel error %s: %s", run.run_id, event["code"], event["message"])

    # --- finishing -------------------------------------------------------------------------

    def _conclude_kernel(self, run: Run) -> None:
        if run.kernel is not None:
            deadline = time.monotonic() + 0.5
            while not run.kernel.eof and time.monotonic() < deadline:
                for line in run.kernel.read_lines(0.05):
                    self._handle_line(run, line)
            if run.kernel.returncode is None:
                run.kernel.wait(self.s.kill_grace_s)
        run.verdict = kernel_verdict(run)
        if run.kernel is not None:
            run.kernel.close()

    def _step_finishing(self) -> None:
        run = self.run
        assert run is not None
        run.peer.stop_servers(run.run_id)
        if run.verdict is None:
            self._conclude_kernel(run)
            run.peer.stop_servers(run.run_id)  # the kernel's last lines may have said `listening`
            if self._begin_references(run):
                return
        assert run.verdict is not None
        status, reason = run.verdict
        run.peer.stop_reporting()
        if run.skip_finish:
            if run.lease is not None:
                run.lease.stop()
            run.spool.set_no_finish(run.skip_finish)
            log.warning("run=%s attempt=%s ended without finish: %s", run.run_id, run.attempt, run.skip_finish)
        else:
            # The lease is held until the server has the finish, not only until it is spooled: a backlog of samples
            # still uploading (after a database outage, say) must not let it run out and the run be failed as
            # "runner went silent" after it succeeded. The uploader stops the keeper once the finish is delivered.
            if run.lease is not None:
                run.spool.lease_keeper = run.lease
            body: dict[str, Any] = {
                "attempt": run.attempt, "status": status, "reason": reason,
                "results": run.stream.results, "end": run.stream.end,
            }
            if run.refs.wanted:
                body["references"] = run.refs.report()
            run.spool.set_finish(body)
            log.info("run=%s attempt=%s finished: %s%s", run.run_id, run.attempt, status,
                     f" ({reason})" if reason else "")
        self.uploader.kick()
        run.refs.close()
        for done in (run.work_dir, run.target_dir):
            if done is not None:
                shutil.rmtree(done, ignore_errors=True)
        self.run = None
        self._runs_done += 1
        self._last_done_at = time.monotonic()
        self.state = State.IDLE

    # --- reference tools (after a kernel that succeeded) ------------------------------------

    def _begin_references(self, run: Run) -> bool:
        """Plan the reference runs; True when there is one to run (state REFERENCING)."""
        if run.skip_finish or run.verdict != (RunStatus.succeeded, None):
            return False
        # fio and IOzone write their files in their own directory: on the job's disk target, where ours was
        if not run.refs.begin(run.run_id, run.experiment, run.kernel_params, run.stream.start, run.stream.results,
                              self.inventory, run.target_dir or run.work_dir, run.deadline_at):
            return False
        self.state = State.REFERENCING
        return True

    def _step_referencing(self) -> None:
        run = self.run
        assert run is not None and run.refs.phase is not None
        phase = run.refs.phase
        why = self._stop_reason(run)
        if why is not None:
            status, reason = why
            if status is None:  # the server decided the run: no finish
                run.skip_finish = run.skip_finish or reason
            log.warning("run=%s: stopping the reference tools: %s", run.run_id, reason)
            phase.abort(reason)  # the kernel's results stand; the tools left are marked failed
        else:
            phase.step(0.2)
            now = phase.current()
            if now is not None and run.lease is not None:
                run.lease.report(now)  # the run page shows which tool runs, for how long (issue 26)
        if phase.done:
            self.state = State.FINISHING

    # --- endings ---------------------------------------------------------------------------

    def _abort_for_revocation(self) -> None:
        run = self.run
        if run is not None:
            if run.refs.running:
                assert run.refs.phase is not None
                run.refs.phase.abort("runner credential revoked")
            if run.kernel is not None and run.kernel.returncode is None:
                run.kernel.kill()
                run.kernel.wait(self.s.kill_grace_s)
            if run.outcome is None:
                run.outcome = (RunStatus.failed, "runner credential revoked")
            self._step_finishing()

    def _exit_revoked(self) -> int:
        self._abort_for_revocation()
        log.error(
            "the server refused this runner's credential (401): it was revoked or the host deleted; "
            "spools stay in %s. To register again, delete %s and start with a new --registration-token",
            self.s.spool_dir, self.s.credential_path,
        )
        return EXIT_REVOKED

    def _exit_shutdown(self) -> int:
        claim = self._abandoned_claim
        if claim is not None:
            result = claim.poll(0)
            if result is not None and result[0] == "ok" and result[1] is not None:
                log.warning("work arrived while stopping; reporting it failed")
                self._begin(result[1])  # shutdown is set: straight to finishing
                if self.state is State.FINISHING:
                    self._step_finishing()
        started = self._shutdown_at or time.monotonic()
        remaining = max(0.0, started + self.s.shutdown_timeout_s - time.monotonic())
        if not self.force.is_set() and not self.uploader.idle():
            log.info("uploading spooled data before exit (up to %.1fs)", remaining)
            self.uploader.wait_idle(remaining, stop=self.force)
        left = [s for s in self.uploader.spools() if not s.done()]
        if left:
            log.warning("%d spool(s) not fully acknowledged; kept in %s for the next start",
                        len(left), self.s.spool_dir)
        log.info("runner stopped")
        return EXIT_OK
