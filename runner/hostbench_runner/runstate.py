"""One run in the daemon's hands: what the assignment said, the kernel's process and stream, the lease, how it
ends, and the two sides a run may have besides its kernel: its reference tools (referencing.py) and, for a
two-host serve run, its peer (peer.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hostbench_common.process import describe_exit
from hostbench_common.runstatus import RunStatus

from .keepalive import LeaseKeeper
from .kernel import KernelProcess
from .peer import PeerServing
from .protocol import Stream
from .referencing import ReferenceRun
from .spool import Spool

MAX_REASON = 2000


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
    target_dir: Path | None = None  # the run's directory on a disk target (daemon.disk_target), removed after
    exited_at: float | None = None
    kernel_params: dict[str, Any] | None = None
    verdict: tuple[str, str | None] | None = None  # the kernel's, once it is over
    refs: ReferenceRun = field(default_factory=ReferenceRun)
    peer: PeerServing = field(default_factory=PeerServing)

    def stop_reason(self, now: float) -> tuple[str | None, str] | None:
        """(status, reason) to stop the run's kernel or tools with, at `now`; status None = the server decided (the
        attempt was refused: no finish). None while the run may go on."""
        if self.spool.stale:
            return (None, "the server refused this attempt (409)")
        if self.spool.rejected:
            return (RunStatus.failed, self.spool.rejected)
        if self.lease is not None:
            if self.lease.stale.is_set():
                return (None, "lease refused (409): the server stopped this run")
            if self.lease.rejected:
                return (RunStatus.failed, self.lease.rejected)
            if self.lease.lost.is_set():
                return (RunStatus.failed, self.lease.lost_reason or "lease lost")
        peer = self.peer.stop_reason()
        if peer is not None:
            return peer
        if now >= self.deadline_at:
            return (RunStatus.failed, f"deadline exceeded ({self.deadline_s:g} s)")
        return None


def cap(text: str) -> str:
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 3] + "..."


def kernel_verdict(run: Run) -> tuple[str, str | None]:
    """The run's status and reason once its kernel is over: the runner's own decision first, then the kernel's
    protocol, its error or end event, its exit."""
    kernel = run.kernel
    rc = kernel.returncode if kernel is not None else None
    tail = kernel.stderr_tail() if kernel is not None else ""

    def with_stderr(text: str) -> str:
        return cap(f"{text}; stderr: {tail}" if tail else text)

    if run.protocol_error is not None:
        return RunStatus.failed, with_stderr(f"kernel protocol error: {run.protocol_error} ({describe_exit(rc)})")
    if run.outcome is not None:
        return run.outcome
    err, end = run.stream.error, run.stream.end
    if err is not None:
        status = RunStatus.untrusted if err["code"] == "verify_failed" else RunStatus.failed
        return status, cap(f"kernel error {err['code']}: {err['message']} ({describe_exit(rc)})")
    if end is not None and end["status"] == "untrusted":
        return RunStatus.untrusted, cap(str(end.get("reason") or "kernel verification failed"))
    if rc != 0:
        return RunStatus.failed, with_stderr(f"kernel failed ({describe_exit(rc)})")
    if end is None:
        return RunStatus.failed, with_stderr(f"kernel output ended without an end event ({describe_exit(rc)})")
    return RunStatus.succeeded, None
