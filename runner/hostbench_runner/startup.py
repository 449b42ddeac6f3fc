"""What the daemon does before and around its loop, apart from it: --register-only, the credential's rotation when
the server asks for it, and what an earlier process left behind (kernel work files: garbage; spools: backlog)."""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hostbench_common.experiments import kernels_needed
from hostbench_common.runstatus import RunStatus

from . import __version__, credential, inventory
from .api import ApiClient, Backoff, call_with_retry
from .config import Settings
from .kernel import KernelCatalog
from .spool import Spool

log = logging.getLogger("hostbench.daemon")

RESTARTED_REASON = "runner restarted during the run"
# --register-only (the installer) gives up on a server it cannot reach after this long, and exits 1.
REGISTER_ONLY_GIVE_UP_S = 90.0


def register_only(s: Settings, api: ApiClient, catalog: KernelCatalog,
                  shutdown: threading.Event) -> dict[str, Any] | None:
    """Register (or, with a stored credential, check the server accepts it); the inventory sent, if any."""
    s.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    stored = credential.load(s.credential_path)
    backoff = Backoff(s.backoff_base_s, s.backoff_cap_s)
    if stored is not None:
        log.info("already registered as host_id=%s (%s): registration skipped", stored.host_id, s.credential_path)
        api.set_token(stored.runner_token)
        call_with_retry(lambda: api.heartbeat({"run": None, "version": __version__}), backoff,
                        shutdown, "heartbeat", give_up_after_s=REGISTER_ONLY_GIVE_UP_S)
        log.info("the server at %s accepts the stored credential", s.server)
        return None
    catalog.load(kernels_needed())
    inv = inventory.collect("/", kernel_info=catalog.build_info, work_dir=s.work_dir,
                            kernel_bin=s.kernel_bin if s.fma_probe else None, probe_cache=s.probe_cache,
                            disk_targets=s.disk_targets, probe_now=False)  # the daemon probes, after it starts
    cred = credential.obtain(
        s.credential_path, api, s.registration_token, s.name, s.labels,
        inv, shutdown, backoff, give_up_after_s=REGISTER_ONLY_GIVE_UP_S,
    )
    log.info("registered with %s as host_id=%s name=%s", s.server, cred.host_id, s.name)
    return inv


def rotated(s: Settings, api: ApiClient, old: credential.Credential) -> credential.Credential | None:
    """Get a new credential, store it (atomically, 0600) and only then use it; the new one, or None. The old one
    stays valid until the server sees the new one, so a failure at any step leaves the runner working with the
    old one, and the next heartbeat asks again."""
    answer = api.rotate_credential()
    token = answer.get("runner_token") if isinstance(answer, dict) else None
    if not isinstance(token, str) or not token:
        log.error("credential rotation: the answer has no runner_token; keeping the current credential")
        return None
    new = credential.Credential(host_id=old.host_id, runner_token=token)
    try:
        credential.save(s.credential_path, new)
    except OSError as exc:
        log.error("credential rotation: cannot store the new credential (%s); keeping the current one", exc)
        return None
    api.set_token(token)
    log.info("credential rotated: the new one is stored in %s and in use", s.credential_path)
    return new


def clean_work_dir(work_dir: Path) -> None:
    """Kernel work files of an earlier process (a future disk kernel's files) are garbage now."""
    if not work_dir.is_dir():
        return
    for child in work_dir.iterdir():
        log.info("removing leftover kernel work files %s", child)
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


# A run's directory on a disk target (daemon.py makes it, fresh, and removes it after the run).
TARGET_RUN_PREFIX = "hostbench-"


def clean_disk_targets(targets: Mapping[str, Path]) -> None:
    """Run directories an earlier process left on the disk targets (it was killed mid-run); nothing else there is
    ours to touch."""
    for path in targets.values():
        for child in path.iterdir() if path.is_dir() else ():
            if child.name.startswith(TARGET_RUN_PREFIX + "run-") and child.is_dir() and not child.is_symlink():
                log.info("removing leftover disk target run directory %s", child)
                shutil.rmtree(child, ignore_errors=True)


def recover_spools(spool_dir: Path) -> list[Spool]:
    """The spools an earlier process left: backlog to upload; one without a finish means that process died
    mid-run, and gets a failed finish."""
    spools = []
    for path in Spool.list_dirs(spool_dir):
        try:
            spool = Spool.open(path)
        except (ValueError, KeyError, OSError) as exc:
            log.error("unreadable spool %s left in place: %s", path, exc)
            continue
        if not spool.has_finish():
            spool.set_finish({
                "attempt": spool.attempt, "status": RunStatus.failed, "reason": RESTARTED_REASON,
                "results": spool.results, "end": None,
            })
        log.info("backlog: run=%s attempt=%s samples pending=%d finish=%s",
                 spool.run_id, spool.attempt, spool.pending_count(),
                 "skip" if spool.finish_skipped() else (spool.finish_body or {}).get("status"))
        spools.append(spool)
    return spools
