"""The runner daemon: one explicit state machine in one loop.

    idle ──► claiming ──► running ──► finishing ──► idle
      ▲          │ 204/error             ▲   │ ▲
      └──────────┘          refused ─────┘   ▼ │  the kernel succeeded and params.reference:
                (bad params, no kernel)   referencing  the reference tools, one at a time

Signal handlers only set flags; the loop notices them. Around the loop run three small threads:
the heartbeat (every 5 s, idle or busy), the uploader (spool → server) and, while a run is on,
its lease keeper (every 5 s; a 409 or 30 s without renewal stops the kernel). The lease is held
until the finish is spooled, through the reference tools (reference.py) if any run. A two-host serve run
that asked for references also keeps reference servers for its peer (reference_serve.py) from the kernel's
`listening` until the run ends, however it ends.
"""

from __future__ import annotations

import enum
import logging
import math
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__, credential, inventory, reference
from .api import ApiClient, Backoff, call_with_retry
from .config import Settings
from .errors import ConfigError, KernelUnavailable, ParamError, ProtocolError, Rejected, Retryable, Stale, Unauthorized
from .experiments import EXPERIMENTS, kernels_needed
from .kernel import KernelCatalog, KernelProcess, describe_exit
from .protocol import Stream, sample_for_api
from .reference_serve import PeerServers
from .spool import Spool, check_run_key
from .uploader import Uploader

log = logging.getLogger("hostbench.daemon")

EXIT_OK, EXIT_ERROR, EXIT_CONFIG, EXIT_REVOKED = 0, 1, 2, 3
MAX_REASON = 2000
STOPPED_REASON = "runner stopped"
RESTARTED_REASON = "runner restarted during the run"
# --register-only (the installer) gives up on a server it cannot reach after this long, and exits 1.
REGISTER_ONLY_GIVE_UP_S = 90.0


class State(enum.Enum):
    IDLE = "idle"
    CLAIMING = "claiming"
    RUNNING = "running"
    REFERENCING = "referencing"
    FINISHING = "finishing"


def advised_interval(ack: Any, default_s: float) -> float:
    """The heartbeat period the server asked for (longer while idle: the long polls show the runner alive),
    within 1..60 s; the runner's own setting when the server says nothing usable."""
    advised = ack.get("heartbeat_s") if isinstance(ack, dict) else None
    if isinstance(advised, (int, float)) and not isinstance(advised, bool) and 1 <= advised <= 60:
        return float(advised)
    return default_s


class Heartbeat:
    """POST /api/runner/heartbeat every interval, idle or busy; the first one carries the inventory, every one
    the runner's version. An answer with `rotate_credential: true` calls `rotate` (from this thread)."""

    def __init__(self, api: ApiClient, interval_s: float, inventory: dict[str, Any] | None,
                 current_run: Callable[[], dict[str, Any] | None], revoked: threading.Event,
                 rotate: Callable[[], None] | None = None):
        self._api, self._interval = api, interval_s
        self._inventory = inventory
        self._current_run = current_run
        self._revoked = revoked
        self._rotate = rotate
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="heartbeat", daemon=True)
        self.reachable: bool | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            body: dict[str, Any] = {"run": self._current_run(), "version": __version__}
            if self._inventory is not None:
                body["inventory"] = self._inventory
            wait = self._interval
            try:
                ack = self._api.heartbeat(body)
                self._inventory = None
                wait = advised_interval(ack, self._interval)
                if self.reachable is not True:
                    log.info("heartbeat ok: server reachable")
                self.reachable = True
                if isinstance(ack, dict) and ack.get("rotate_credential") is True and self._rotate is not None:
                    try:
                        self._rotate()
                    except (Rejected, Retryable) as exc:
                        log.warning("credential rotation failed; the next heartbeat asks again: %s", exc)
            except Unauthorized as exc:
                log.error("heartbeat refused: %s", exc)
                self._revoked.set()
                return
            except Rejected as exc:
                log.error("heartbeat rejected (%s); inventory will not be re-sent", exc)
                self._inventory = None
            except Retryable as exc:
                if self.reachable is not False:
                    log.warning("heartbeat failed, server unreachable: %s", exc)
                self.reachable = False
            except Exception as exc:  # e.g. the client closed under it at exit
                if self._stop.is_set():
                    return
                log.warning("heartbeat error: %s: %s", type(exc).__name__, exc)
            self._stop.wait(wait)


def lease_timing(lease_s: Any, renew_s: float, lost_after_s: float) -> tuple[float, float]:
    """(renew every, stop the kernel after this long without a renewal) for a run whose server lease is `lease_s`:
    at least three renewals per lease, and a fence a renewal period shorter than the lease, so the kernel has
    stopped before the server may expire the lease and hand the run to a new attempt (docs/reliability.md,
    rule 4)."""
    if isinstance(lease_s, (int, float)) and not isinstance(lease_s, bool) and lease_s > 0:
        renew_s = min(renew_s, max(0.5, lease_s / 3))
        lost_after_s = min(lost_after_s, max(2 * renew_s, lease_s - renew_s))
    return renew_s, lost_after_s


class LeaseKeeper:
    """Renews the lease of one (run, attempt) every `renew_s` (docs/reliability.md, rule 4).

    The run is lost (the kernel must stop) when no renewal succeeded for `lost_after_s`, which the daemon keeps
    shorter than the server's lease: the runner stops before the server may give the run away. One exception:
    while the server itself answers that only its database is unavailable (503, X-Hostbench-Unavailable:
    database), nobody can be handed this run, so the kernel keeps measuring (into the spool) for up to
    `db_grace_s`; the server gives running leases a fresh term when its database is back."""

    def __init__(self, api: ApiClient, run_id: Any, attempt: int, renew_s: float,
                 lost_after_s: float, revoked: threading.Event, db_grace_s: float = 0.0):
        self._api, self.run_id, self.attempt = api, run_id, attempt
        self._renew_s, self._lost_after_s, self._db_grace_s = renew_s, lost_after_s, db_grace_s
        self._revoked = revoked
        self.stale = threading.Event()  # 409: the server wants the kernel stopped
        self.lost = threading.Event()  # no renewal for lost_after_s
        self.lost_reason = ""
        self.rejected: str | None = None
        self.last_ok = time.monotonic()
        self.last_db_down: float | None = None  # the server's last "database unavailable" answer
        self.db_down_since: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"lease-{run_id}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(self._renew_s):
            try:
                self._api.lease(self.run_id, self.attempt, timeout_s=max(1.0, min(self._renew_s, 5.0)))
                self.last_ok = time.monotonic()
                if self.db_down_since is not None:
                    log.info("lease renewed for run=%s after the server's database was unavailable for %.0f s",
                             self.run_id, self.last_ok - self.db_down_since)
                self.db_down_since = self.last_db_down = None
            except Stale as exc:
                log.warning("lease refused for run=%s attempt=%s: %s", self.run_id, self.attempt, exc)
                self.stale.set()
                return
            except Unauthorized as exc:
                log.error("lease refused: %s", exc)
                self._revoked.set()
                return
            except Rejected as exc:
                self.rejected = f"lease refused by the server: {exc}"
                return
            except Retryable as exc:
                if exc.unavailable == "database" and self._db_grace_s > 0:
                    self.last_db_down = time.monotonic()
                    if self.db_down_since is None:
                        self.db_down_since = self.last_db_down
                        log.warning("run=%s: the server's database is unavailable; measuring on (spooled) for up "
                                    "to %.0f s", self.run_id, self._db_grace_s)
                else:
                    log.warning("lease renewal failed for run=%s (%.0fs since last): %s",
                                self.run_id, time.monotonic() - self.last_ok, exc)
            except Exception as exc:  # never let the keeper die silently: count it as a failed renewal
                if self._stop.is_set():
                    return
                log.warning("lease renewal error for run=%s: %s: %s", self.run_id, type(exc).__name__, exc)
            why = self.lost_because(time.monotonic())
            if why:
                self.lost_reason = why
                self.lost.set()
                return

    def lost_because(self, now: float) -> str:
        """Why the lease counts as lost at `now`, or "" while it holds."""
        heard = max(self.last_ok, self.last_db_down or 0.0)  # the server answered (renewed, or "database down")
        if now - heard >= self._lost_after_s:
            return f"lease lost: server unreachable for {now - heard:.0f} s"
        if self.db_down_since is not None and now - self.db_down_since >= self._db_grace_s:
            return f"lease lost: the server's database unavailable for {now - self.db_down_since:.0f} s"
        return ""


class Listening:
    """Reports a serving kernel's port (POST .../listening), with the ports of the run's reference servers if it
    offers any, from its own thread, through the one client and its retry policy, so the loop keeps reading the
    kernel. A 409 or a refusal stops the serve run."""

    def __init__(self, api: ApiClient, run_id: Any, attempt: int, port: int, backoff: Backoff,
                 give_up_after_s: float, revoked: threading.Event, reference_ports: dict[str, int] | None = None):
        self._api, self.run_id, self.attempt, self.port = api, run_id, attempt, port
        self.reference_ports = reference_ports
        self._backoff, self._give_up_after_s, self._revoked = backoff, give_up_after_s, revoked
        self.stop = threading.Event()
        self.stale: str | None = None  # the server refused this attempt: stop, no finish
        self.failed: str | None = None  # could not be reported: fail the run
        self.done = threading.Event()
        threading.Thread(target=self._run, name=f"listening-{run_id}", daemon=True).start()

    def _run(self) -> None:
        try:
            call_with_retry(lambda: self._api.listening(self.run_id, self.attempt, self.port, self.reference_ports),
                            self._backoff, self.stop, f"report port {self.port} of run={self.run_id}",
                            self._give_up_after_s)
            log.info("run=%s: reported listening port %d%s", self.run_id, self.port,
                     f", reference servers {self.reference_ports}" if self.reference_ports is not None else "")
        except Stale as exc:
            self.stale = f"listening refused (409): {exc}"
        except Unauthorized as exc:
            log.error("listening refused: %s", exc)
            self._revoked.set()
        except Rejected as exc:
            self.failed = f"the server refused the listening port: {exc}"
        except Retryable as exc:
            if not self.stop.is_set():
                self.failed = f"could not report the listening port: {exc}"
        except Exception as exc:  # never die silently
            self.failed = f"could not report the listening port: {type(exc).__name__}: {exc}"
        finally:
            self.done.set()


class _Claim:
    """One long poll of GET /api/runner/work in a daemon thread, so signals stay prompt."""

    def __init__(self, api: ApiClient, wait_s: int):
        self._q: queue.Queue[tuple[str, Any]] = queue.Queue(1)
        self._api, self._wait_s = api, wait_s
        threading.Thread(target=self._run, name="claim", daemon=True).start()

    def _run(self) -> None:
        try:
            self._q.put(("ok", self._api.get_work(self._wait_s)))
        except Exception as exc:
            self._q.put(("error", exc))

    def poll(self, timeout_s: float) -> tuple[str, Any] | None:
        try:
            return self._q.get(timeout=timeout_s)
        except queue.Empty:
            return None


@dataclass
class Run:
    run_id: Any
    attempt: int
    experiment: Any
    spool: Spool
    deadline_s: float
    deadline_at: float
    kernel: KernelProcess | None = None
    stream: Stream = field(default_factory=Stream)
    lease: LeaseKeeper | None = None
    outcome: tuple[str, str] | None = None  # decided by the runner: (status, reason)
    skip_finish: str | None = None  # the server decided the run; say why no finish is sent
    protocol_error: str | None = None
    work_dir: Path | None = None
    exited_at: float | None = None
    kernel_params: dict[str, Any] | None = None
    wants_reference: bool = False
    verdict: tuple[str, str | None] | None = None  # the kernel's, once it is over
    references: reference.ReferencePhase | None = None
    listening: Listening | None = None  # a serving kernel's port, being reported to the server
    # network_serve with reference tools: the servers the peer's tools run against, stopped when the run ends.
    servers: PeerServers | None = None
    # network_drive: the ports of the peer's reference servers, from the assignment (the server's records).
    reference_ports: dict[str, int] = field(default_factory=dict)


def _cap(text: str) -> str:
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 3] + "..."


def _mem_bytes(inv: dict[str, Any] | None) -> int | None:
    total = ((inv or {}).get("memory") or {}).get("total_bytes")
    if isinstance(total, int) and total > 0:
        return total
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return None


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
        self.inventory: dict[str, Any] | None = None
        self.state = State.IDLE
        self.run: Run | None = None
        self._claim: _Claim | None = None
        self._abandoned_claim: _Claim | None = None
        self._claim_backoff = Backoff(settings.backoff_base_s, settings.backoff_cap_s)
        self._idle_until = 0.0
        self._claim_started = 0.0
        self._backlog_until: float | None = None
        self._shutdown_at: float | None = None

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
        self.inventory = inventory.collect("/", kernel_info=self.catalog.build_info, work_dir=self.s.work_dir)
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
        self._backlog_until = time.monotonic() + self.s.backlog_wait_s
        log.info("runner ready: host_id=%s name=%s server=%s", cred.host_id, self.s.name, self.s.server)

    def register_only(self) -> int:
        """--register-only: register (or, with a stored credential, check the server accepts it) and exit."""
        self.s.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        stored = credential.load(self.s.credential_path)
        backoff = Backoff(self.s.backoff_base_s, self.s.backoff_cap_s)
        if stored is not None:
            log.info("already registered as host_id=%s (%s): registration skipped", stored.host_id,
                     self.s.credential_path)
            self.api.set_token(stored.runner_token)
            call_with_retry(lambda: self.api.heartbeat({"run": None, "version": __version__}), backoff,
                            self.shutdown, "heartbeat", give_up_after_s=REGISTER_ONLY_GIVE_UP_S)
            log.info("the server at %s accepts the stored credential", self.s.server)
            return EXIT_OK
        self.catalog.load(kernels_needed())
        self.inventory = inventory.collect("/", kernel_info=self.catalog.build_info, work_dir=self.s.work_dir)
        cred = credential.obtain(
            self.s.credential_path, self.api, self.s.registration_token, self.s.name, self.s.labels,
            self.inventory, self.shutdown, backoff, give_up_after_s=REGISTER_ONLY_GIVE_UP_S,
        )
        log.info("registered with %s as host_id=%s name=%s", self.s.server, cred.host_id, self.s.name)
        return EXIT_OK

    def rotate_credential(self) -> None:
        """The server asked for a new credential: get it, store it (atomically, 0600) and only then use it.
        The old one stays valid until the server sees the new one, so a failure at any step leaves the runner
        working with the old one, and the next heartbeat asks again."""
        old = self.credential
        if old is None:
            return
        answer = self.api.rotate_credential()
        token = answer.get("runner_token") if isinstance(answer, dict) else None
        if not isinstance(token, str) or not token:
            log.error("credential rotation: the answer has no runner_token; keeping the current credential")
            return
        new = credential.Credential(host_id=old.host_id, runner_token=token)
        try:
            credential.save(self.s.credential_path, new)
        except OSError as exc:
            log.error("credential rotation: cannot store the new credential (%s); keeping the current one", exc)
            return
        self.api.set_token(token)
        self.credential = new
        log.info("credential rotated: the new one is stored in %s and in use", self.s.credential_path)

    def close(self) -> None:
        if self.heartbeat is not None:
            self.heartbeat.stop()
        self.uploader.stop(timeout_s=2.0)
        self.api.close()

    def clean_work_dir(self) -> None:
        """Kernel work files of an earlier process (a future disk kernel's files) are garbage now."""
        if not self.s.work_dir.is_dir():
            return
        for child in self.s.work_dir.iterdir():
            log.info("removing leftover kernel work files %s", child)
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)

    def recover_spools(self) -> None:
        """A spool left by an earlier process is backlog; without a finish, that process died mid-run."""
        for path in Spool.list_dirs(self.s.spool_dir):
            try:
                spool = Spool.open(path)
            except (ValueError, KeyError, OSError) as exc:
                log.error("unreadable spool %s left in place: %s", path, exc)
                continue
            if not spool.has_finish():
                spool.set_finish({
                    "attempt": spool.attempt, "status": "failed", "reason": RESTARTED_REASON,
                    "results": spool.results, "end": None,
                })
            log.info("backlog: run=%s attempt=%s samples pending=%d finish=%s",
                     spool.run_id, spool.attempt, spool.pending_count(),
                     "skip" if spool.finish_skipped() else (spool.finish_body or {}).get("status"))
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
                return self._exit_shutdown()
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
        if run.listening is not None:
            run.listening.stop.set()
        self._stop_servers(run)
        if run.kernel is not None:
            run.kernel.kill()
            run.kernel.wait(self.s.kill_grace_s)
            run.kernel.close()
        if run.references is not None:
            run.references.close()
        try:
            run.spool.set_finish({
                "attempt": run.attempt, "status": "failed",
                "reason": _cap(f"runner error: {type(exc).__name__}: {exc}"),
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
        self._claim = _Claim(self.api, self.s.poll_wait_s)
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
        spool = Spool.create(self.s.spool_dir, run_id, attempt, experiment if isinstance(experiment, str) else None)
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
            run.outcome = ("failed", STOPPED_REASON)
            return
        try:
            exp = EXPERIMENTS.get(experiment) if isinstance(experiment, str) else None
            if exp is None:
                raise ParamError(f"unknown experiment {experiment!r} (this runner runs: {', '.join(EXPERIMENTS)})")
            if not deadline_ok:
                raise ParamError(f"deadline_s must be a positive number, got {deadline_s!r}")
            kernel_params = exp.kernel_params(assignment.get("params"), self.catalog.schema(exp.kernel),
                                              deadline_s=float(deadline_s))
            argv = exp.argv(self.s.kernel_bin, kernel_params)
            run.kernel_params = kernel_params
            run.wants_reference = exp.wants_reference(assignment["params"])
            run.reference_ports = dict(assignment["params"].get("reference_ports") or {})
        except ParamError as exc:
            log.error("run=%s refused: invalid params: %s", run_id, exc)
            run.outcome = ("failed", _cap(f"invalid params: {exc}"))
            return
        except KernelUnavailable as exc:
            log.error("run=%s refused: %s", run_id, exc)
            run.outcome = ("failed", _cap(f"kernel unavailable: {exc}"))
            return
        run.work_dir = self.s.work_dir / spool.key
        shutil.rmtree(run.work_dir, ignore_errors=True)
        run.work_dir.mkdir(parents=True, mode=0o700)
        try:
            run.kernel = KernelProcess(argv, run.work_dir)
        except (OSError, subprocess.SubprocessError) as exc:
            log.error("run=%s: cannot start the kernel: %s", run_id, exc)
            run.outcome = ("failed", _cap(f"cannot start the kernel: {exc}"))
            return
        run.stream = Stream(max_samples=int(run.deadline_s * 10) + 100)
        renew_s, fence_s = lease_timing(assignment.get("lease_s"), self.s.lease_renew_s, self.s.lease_lost_after_s)
        run.lease = LeaseKeeper(self.api, run_id, attempt, renew_s, fence_s, self.revoked, self.s.db_outage_grace_s)
        run.lease.start()
        log.info("kernel started run=%s pid=%d argv=%s", run_id, run.kernel.pid, " ".join(argv[1:]))
        self.state = State.RUNNING

    # --- running ---------------------------------------------------------------------------

    def _stop_reason(self, run: Run) -> tuple[str | None, str] | None:
        """(status, reason) to stop the kernel with; status None = the server decided, no finish."""
        if self.shutdown.is_set():
            return ("failed", STOPPED_REASON)
        if run.spool.stale:
            return (None, "the server refused this attempt (409)")
        if run.spool.rejected:
            return ("failed", run.spool.rejected)
        if run.lease is not None:
            if run.lease.stale.is_set():
                return (None, "lease refused (409): the server stopped this run")
            if run.lease.rejected:
                return ("failed", run.lease.rejected)
            if run.lease.lost.is_set():
                return ("failed", run.lease.lost_reason or "lease lost")
        if run.listening is not None:
            if run.listening.stale:
                return (None, run.listening.stale)
            if run.listening.failed:
                return ("failed", run.listening.failed)
        if time.monotonic() >= run.deadline_at:
            return ("failed", f"deadline exceeded ({run.deadline_s:g} s)")
        return None

    def _stop_kernel(self, run: Run, status: str | None, reason: str) -> None:
        assert run.kernel is not None
        if status is None:
            run.skip_finish = run.skip_finish or reason
        elif run.outcome is None and run.protocol_error is None:
            run.outcome = (status, _cap(reason))
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
                run.spool.set_start(event)
                self.uploader.kick()
                log.info("run=%s kernel start: kernel=%s unit=%s", run.run_id, event.get("kernel"), event.get("unit"))
            elif kind == "result":
                run.spool.append_result(event)
            elif kind == "listening" and run.listening is None:
                log.info("run=%s kernel listening on %s port %d", run.run_id, event.get("bind"), event["port"])
                ports = self._start_servers(run)
                run.listening = Listening(self.api, run.run_id, run.attempt, event["port"],
                                          Backoff(self.s.backoff_base_s, self.s.backoff_cap_s),
                                          self.s.lease_lost_after_s, self.revoked, reference_ports=ports)
            elif kind == "served":
                log.info("run=%s server stopped: %s; sessions=%s refused=%s bytes=%s", run.run_id,
                         event["stopped"], event["sessions"], event["refused"], event["bytes_received"])
        except OSError as exc:  # disk full: a sample we cannot keep must not be measured on
            log.error("run=%s: cannot write the spool: %s", run.run_id, exc)
            if run.kernel is not None and not run.kernel.stopping:
                self._stop_kernel(run, "failed", f"cannot write the spool: {exc}")
            return
        if kind == "end":
            log.info("run=%s kernel end: status=%s samples=%s", run.run_id, event["status"], event.get("samples"))
        elif kind == "error":
            log.warning("run=%s kernel error %s: %s", run.run_id, event["code"], event["message"])

    # --- finishing -------------------------------------------------------------------------

    def _verdict(self, run: Run) -> tuple[str, str | None]:
        kernel = run.kernel
        rc = kernel.returncode if kernel is not None else None
        tail = kernel.stderr_tail() if kernel is not None else ""

        def with_stderr(text: str) -> str:
            return _cap(f"{text}; stderr: {tail}" if tail else text)

        if run.protocol_error is not None:
            return "failed", with_stderr(f"kernel protocol error: {run.protocol_error} ({describe_exit(rc)})")
        if run.outcome is not None:
            return run.outcome
        err, end = run.stream.error, run.stream.end
        if err is not None:
            status = "untrusted" if err["code"] == "verify_failed" else "failed"
            return status, _cap(f"kernel error {err['code']}: {err['message']} ({describe_exit(rc)})")
        if end is not None and end["status"] == "untrusted":
            return "untrusted", _cap(str(end.get("reason") or "kernel verification failed"))
        if rc != 0:
            return "failed", with_stderr(f"kernel failed ({describe_exit(rc)})")
        if end is None:
            return "failed", with_stderr(f"kernel output ended without an end event ({describe_exit(rc)})")
        return "succeeded", None

    def _conclude_kernel(self, run: Run) -> None:
        if run.kernel is not None:
            deadline = time.monotonic() + 0.5
            while not run.kernel.eof and time.monotonic() < deadline:
                for line in run.kernel.read_lines(0.05):
                    self._handle_line(run, line)
            if run.kernel.returncode is None:
                run.kernel.wait(self.s.kill_grace_s)
        run.verdict = self._verdict(run)
        if run.kernel is not None:
            run.kernel.close()

    def _step_finishing(self) -> None:
        run = self.run
        assert run is not None
        self._stop_servers(run)
        if run.verdict is None:
            self._conclude_kernel(run)
            self._stop_servers(run)  # the kernel's last lines may have said `listening`
            if self._begin_references(run):
                return
        assert run.verdict is not None
        status, reason = run.verdict
        if run.lease is not None:
            run.lease.stop()
        if run.listening is not None:
            run.listening.stop.set()
        if run.skip_finish:
            run.spool.set_no_finish(run.skip_finish)
            log.warning("run=%s attempt=%s ended without finish: %s", run.run_id, run.attempt, run.skip_finish)
        else:
            body: dict[str, Any] = {
                "attempt": run.attempt, "status": status, "reason": reason,
                "results": run.stream.results, "end": run.stream.end,
            }
            if run.wants_reference:
                body["references"] = run.references.report() if run.references is not None else []
            run.spool.set_finish(body)
            log.info("run=%s attempt=%s finished: %s%s", run.run_id, run.attempt, status,
                     f" ({reason})" if reason else "")
        self.uploader.kick()
        if run.references is not None:
            run.references.close()
        if run.work_dir is not None:
            shutil.rmtree(run.work_dir, ignore_errors=True)
        self.run = None
        self.state = State.IDLE

    # --- reference servers of a two-host serve run --------------------------------------------

    def _start_servers(self, run: Run) -> dict[str, int] | None:
        """Start the reference servers a serve run offers its peer; their ports, or None when none are wanted."""
        if run.experiment != "network_serve" or not run.wants_reference or run.work_dir is None \
                or run.kernel_params is None or run.servers is not None:
            return None
        run.servers = PeerServers(str(run.kernel_params.get("op")), run.work_dir / "reference-servers")
        try:
            run.servers.start()
        except Exception:  # a bug here must not fail the serve run: its peer's tools report unavailable
            log.exception("run=%s: cannot start the reference servers", run.run_id)
            self._stop_servers(run)
            return {}
        for tool, why in run.servers.unavailable.items():
            log.warning("run=%s: no %s reference server: %s", run.run_id, tool, why)
        return dict(run.servers.ports)

    @staticmethod
    def _stop_servers(run: Run) -> None:
        servers, run.servers = run.servers, None
        if servers is not None:
            try:
                servers.stop()
            except Exception:
                log.exception("run=%s: stopping the reference servers failed", run.run_id)

    # --- reference tools (after a kernel that succeeded) ------------------------------------

    def _begin_references(self, run: Run) -> bool:
        """Plan the reference runs; True when there is one to run (state REFERENCING)."""
        if not run.wants_reference or run.skip_finish or run.verdict != ("succeeded", None):
            return False
        if run.work_dir is None or run.kernel_params is None or not isinstance(run.experiment, str):
            return False
        ctx = reference.Context(
            experiment=run.experiment, params=run.kernel_params, start=run.stream.start,
            results=run.stream.results, inventory=self.inventory,
            cpus=len(os.sched_getaffinity(0)), mem_bytes=_mem_bytes(self.inventory),
            is_root=os.geteuid() == 0, reference_ports=run.reference_ports,
        )
        plans, broken = reference.plan(ctx)
        run.references = reference.ReferencePhase(plans, run.work_dir / "references", run.deadline_at,
                                                  broken=broken)
        if run.references.done:
            return False
        log.info("run=%s: %d reference run(s): %s", run.run_id, len(plans),
                 ", ".join(f"{p.tool}@{p.matches.get('threads')}" for p in plans))
        self.state = State.REFERENCING
        return True

    def _step_referencing(self) -> None:
        run = self.run
        assert run is not None and run.references is not None
        why = self._stop_reason(run)
        if why is not None:
            status, reason = why
            if status is None:  # the server decided the run: no finish
                run.skip_finish = run.skip_finish or reason
            log.warning("run=%s: stopping the reference tools: %s", run.run_id, reason)
            run.references.abort(reason)  # the kernel's results stand; the tools left are marked failed
        else:
            run.references.step(0.2)
        if run.references.done:
            self.state = State.FINISHING

    # --- endings ---------------------------------------------------------------------------

    def _abort_for_revocation(self) -> None:
        run = self.run
        if run is not None:
            if run.references is not None and not run.references.done:
                run.references.abort("runner credential revoked")
            if run.kernel is not None and run.kernel.returncode is None:
                run.kernel.kill()
                run.kernel.wait(self.s.kill_grace_s)
            if run.outcome is None:
                run.outcome = ("failed", "runner credential revoked")
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
