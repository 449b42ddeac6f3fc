"""The threads that keep the runner in touch with the server while the daemon's loop runs: the heartbeat (every
few seconds, idle or busy), the long poll for work (`Claim`, so signals stay prompt) and, while a run is on, its
lease keeper (docs/reliability.md, rule 4)."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from . import __version__
from .api import ApiClient
from .errors import Rejected, Retryable, Stale, Unauthorized

log = logging.getLogger("hostbench.daemon")


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
        self._wake = threading.Event()  # a beat now: stop, or an inventory to send
        self._thread = threading.Thread(target=self._loop, name="heartbeat", daemon=True)
        self.reachable: bool | None = None

    def start(self) -> None:
        self._thread.start()

    def send_inventory(self, inventory: dict[str, Any]) -> None:
        """A heartbeat now carries this inventory (it changed: a background FMA probe)."""
        self._inventory = inventory
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            body: dict[str, Any] = {"run": self._current_run(), "version": __version__}
            sent = self._inventory
            if sent is not None:
                body["inventory"] = sent
            wait = self._interval
            try:
                ack = self._api.heartbeat(body)
                if self._inventory is sent:  # not replaced meanwhile (send_inventory): that one goes next
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
                if self._inventory is sent:
                    self._inventory = None
            except Retryable as exc:
                if self.reachable is not False:
                    log.warning("heartbeat failed, server unreachable: %s", exc)
                self.reachable = False
            except Exception as exc:  # e.g. the client closed under it at exit
                if self._stop.is_set():
                    return
                log.warning("heartbeat error: %s: %s", type(exc).__name__, exc)
            self._wake.wait(wait)
            self._wake.clear()


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
        self._wake = threading.Event()  # a new phase to report: renew now rather than at the next turn
        self.phase: dict[str, Any] | None = None  # what the runner does now, sent with every renewal
        self._thread = threading.Thread(target=self._loop, name=f"lease-{run_id}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def report(self, phase: dict[str, Any]) -> None:
        """A new phase (the kernel, reference tool i of n): sent at once, and with every renewal after."""
        if phase != self.phase:
            self.phase = phase
            self._wake.set()

    def _loop(self) -> None:
        while True:
            self._wake.wait(self._renew_s)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                # wait for the answer as long as the fence allows (an answer, even "database unavailable", keeps
                # the lease; none by the fence loses it either way), at least 1 s, at most 5 s
                heard = max(self.last_ok, self.last_db_down or 0.0)
                left = self._lost_after_s - (time.monotonic() - heard) - 0.1
                self._api.lease(self.run_id, self.attempt, timeout_s=max(1.0, min(left, 5.0)), phase=self.phase)
                self.last_ok = time.monotonic()
                if self.db_down_since is not None:
                    log.info("lease renewed for run=%s after the server's database was unavailable for %.0f s",
                             self.run_id, self.last_ok - self.db_down_since)
                self.db_down_since = self.last_db_down = None
            except Stale as exc:
                if self._stop.is_set():  # a renewal in flight when the run finished: the 409 is the finish's own
                    return
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


class Claim:
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
