"""The uploader thread: sends what the spools hold, in order start → samples → finish (or, where the server ended
the run and no finish is sent, `closed`: the attempt's samples are all in, so its live streams may end).

It wakes when a sample is appended and at least every `upload_interval_s` while work is pending,
so a measured sample is on the server well under a second later. Each spool has its own backoff:
a server that fails one run's batch does not stall another's.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from hostbench_common.runstatus import RunStatus

from .api import ApiClient, Backoff
from .config import Settings
from .errors import Rejected, Retryable, Stale, Unauthorized
from .spool import Spool

log = logging.getLogger("hostbench.uploader")


class Uploader:
    def __init__(self, api: ApiClient, settings: Settings, revoked: threading.Event):
        self._api = api
        self._settings = settings
        self._revoked = revoked
        self._spools: dict[str, Spool] = {}
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="uploader", daemon=True)

    # --- control ---------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        self.kick()
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    def add(self, spool: Spool) -> None:
        if spool.backoff is None:
            spool.backoff = Backoff(self._settings.backoff_base_s, self._settings.backoff_cap_s)
        with self._cond:
            self._spools[spool.key] = spool
            self._cond.notify_all()

    def kick(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def spools(self) -> list[Spool]:
        with self._cond:
            return list(self._spools.values())

    def idle(self) -> bool:
        """Nothing left that could be sent now (active runs without a finish may still grow)."""
        return not any(_has_work(s) for s in self.spools())

    def wait_idle(self, timeout_s: float, stop: threading.Event | None = None) -> bool:
        deadline = time.monotonic() + timeout_s
        while not self.idle():
            if time.monotonic() >= deadline or self._revoked.is_set() or not self._thread.is_alive():
                return False
            if stop is not None and stop.is_set():
                return False
            time.sleep(0.05)
        return True

    # --- the loop --------------------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stop.is_set():
            progressed = False
            for spool in self.spools():
                if self._stop.is_set() or self._revoked.is_set():
                    break
                try:
                    progressed |= self._service(spool)
                except Unauthorized as exc:
                    log.error("credential refused by the server (revoked?): %s", exc)
                    self._revoked.set()
                except Exception:  # never let one spool kill the thread
                    log.exception("uploader error on %s", spool.key)
                    spool.next_try = time.monotonic() + spool.backoff.next_delay()
            if self._revoked.is_set():
                return
            if not progressed:
                with self._cond:
                    self._cond.wait(self._settings.upload_interval_s)

    def _service(self, spool: Spool) -> bool:
        """One step for one spool; True when it sent something (more may be ready at once)."""
        if spool.deleted:
            self._forget(spool)
            return False
        if spool.done():
            self._drop(spool, "all acknowledged", logging.INFO)
            return True
        if not _has_work(spool) or time.monotonic() < spool.next_try:
            return False
        phase = "start"
        batch: list[dict[str, Any]] = []
        try:
            if spool.start_pending():
                self._api.start(spool.run_id, {"attempt": spool.attempt, "kernel_info": spool.start_event})
                spool.ack_start()
                log.info("start sent run=%s attempt=%s", spool.run_id, spool.attempt)
            elif spool.pending_count():
                phase = "samples"
                batch = spool.pending_samples(self._settings.upload_batch_max)
                self._api.samples(spool.run_id, {"attempt": spool.attempt, "samples": batch})
                spool.ack_samples(batch[-1]["seq"])
                log.debug("samples sent run=%s attempt=%s seq=%d..%d",
                          spool.run_id, spool.attempt, batch[0]["seq"], batch[-1]["seq"])
            elif spool.finish_pending() and spool.finish_skipped():
                phase = "closed"
                self._api.closed(spool.run_id, spool.attempt)
                spool.ack_finish()
                log.info("closed sent run=%s attempt=%s (no finish: %s)", spool.run_id, spool.attempt,
                         (spool.finish_body or {}).get("why"))
            elif spool.finish_pending():
                phase = "finish"
                body = dict(spool.finish_body or {})
                if spool.rejected and body.get("status") == RunStatus.succeeded:
                    body.update(status=RunStatus.failed, reason=spool.rejected)
                self._api.finish(spool.run_id, body)
                spool.ack_finish()
                log.info("finish sent run=%s attempt=%s status=%s", spool.run_id, spool.attempt, body.get("status"))
            spool.backoff.reset()
            if spool.done():
                self._drop(spool, "all acknowledged", logging.INFO)
            return True
        except Retryable as exc:
            delay = spool.backoff.next_delay(exc.retry_after)
            spool.next_try = time.monotonic() + delay
            log.warning("%s upload for run=%s attempt=%s failed, retry in %.1fs: %s",
                        phase, spool.run_id, spool.attempt, delay, exc)
            return False
        except Stale as exc:
            spool.stale = True
            self._drop(spool, f"server says the attempt is stale ({exc}); spool dropped", logging.WARNING)
            return True
        except Rejected as exc:
            if phase == "start":
                spool.ack_start()
                spool.mark_rejected(f"server rejected start: {exc}")
            elif phase == "samples":
                spool.ack_samples(batch[-1]["seq"])
                spool.mark_rejected(
                    f"server rejected samples {batch[0]['seq']}..{batch[-1]['seq']}: {exc}"
                )
                log.error("samples %d..%d of run=%s attempt=%s rejected, dropped: %s",
                          batch[0]["seq"], batch[-1]["seq"], spool.run_id, spool.attempt, exc)
            else:
                self._drop(spool, f"server rejected {phase} ({exc}); spool dropped", logging.ERROR)
            return True

    def _drop(self, spool: Spool, why: str, level: int) -> None:
        log.log(level, "spool run=%s attempt=%s closed: %s", spool.run_id, spool.attempt, why)
        spool.delete()
        self._forget(spool)

    def _forget(self, spool: Spool) -> None:
        if spool.lease_keeper is not None:  # the finish is delivered (or can never be): the lease is no longer held
            spool.lease_keeper.stop()
            spool.lease_keeper = None
        with self._cond:
            if self._spools.get(spool.key) is spool:
                del self._spools[spool.key]


def _has_work(spool: Spool) -> bool:
    if spool.deleted:
        return False
    return (
        spool.start_pending()
        or spool.pending_count() > 0
        or spool.finish_pending()
        or spool.done()
    )
