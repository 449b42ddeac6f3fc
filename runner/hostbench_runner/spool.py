"""The durable spool (docs/reliability.md, rule 5): a sample is on disk before it is sent.

One directory per (run_id, attempt) under <state>/spool/:

    meta.json       {run_id, attempt, experiment, created_at}          written once
    start.json      the kernel's start event, for POST .../start        written once
    samples.jsonl   one Sample per line, append-only, fsync per append
    results.jsonl   the kernel's result events, append-only
    finish.json     the finish body, written before it is sent; {"skip": true} = server decided
    state.json      {acked_seq, start_acked, finish_acked, rejected}    replaced atomically after
                    each acknowledgement from the server

A crash between an append and its acknowledgement re-sends that sample on the next start; the
server ingests idempotently by (run, attempt, seq). The directory is deleted once the start, every
sample and the finish are acknowledged (or the server called the attempt stale).

A full disk (ENOSPC, or any write error): a sample that cannot be appended is not kept (its partial line is cut
off) and the error goes to the daemon, which stops the kernel and fails the run with that reason; the start,
the results and the finish are kept in memory and sent anyway (the server must hear why the run ended, not a
silence); an acknowledgement that cannot be recorded is kept in memory (a restart re-sends, which the server
ingests idempotently). A spool that could not even be created is `volatile`: memory only, for the finish that
says so (docs/reliability.md, rule 5).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import shutil
import threading
import time
from pathlib import Path
from typing import Any

log = logging.getLogger("hostbench.spool")

RESERVE_BYTES = 256 * 1024  # a spool file system with less free than this counts as full (Spool._check_room)
_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_DIR_NAME = re.compile(r"^run-(?P<run>[A-Za-z0-9_-]{1,64})-attempt-(?P<attempt>\d{1,9})$")


def check_run_key(run_id: Any, attempt: Any) -> None:
    """run_id and attempt become a directory name and URL path: they must be plain."""
    if isinstance(run_id, bool) or not (
        (isinstance(run_id, int) and run_id >= 0) or (isinstance(run_id, str) and _SAFE_ID.match(run_id))
    ):
        raise ValueError(f"bad run_id {run_id!r}")
    if isinstance(attempt, bool) or not isinstance(attempt, int) or not 0 <= attempt < 10**9:
        raise ValueError(f"bad attempt {attempt!r}")


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, mode: int = 0o600) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every complete JSON line; a torn last line (crash mid-append) is skipped with a log line."""
    out: list[dict[str, Any]] = []
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return out
    for n, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            log.warning("spool %s line %d is torn or corrupt; skipped", path, n)
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def _append(fh: Any, data: bytes) -> None:
    """Append `data` to an unbuffered file, fsynced; on a write error the file is cut back to where it was, so a
    torn line never sits before a later one."""
    pos = fh.seek(0, os.SEEK_END)
    try:
        view = memoryview(data)
        while view:
            view = view[fh.write(view):]
        os.fsync(fh.fileno())
    except OSError:
        try:
            fh.truncate(pos)
        except OSError:
            pass
        raise


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except ValueError:
        log.warning("spool file %s is corrupt; ignored", path)
        return None


class Spool:
    def __init__(self, path: Path, run_id: Any, attempt: int, experiment: str | None):
        self.path = path
        self.run_id = run_id
        self.attempt = attempt
        self.experiment = experiment
        self._lock = threading.Lock()
        self._pending: list[dict[str, Any]] = []  # samples with seq > acked_seq, in seq order
        self._last_seq = -1
        self._results: list[dict[str, Any]] = []
        self._start: dict[str, Any] | None = None
        self._finish: dict[str, Any] | None = None
        self._state: dict[str, Any] = {
            "acked_seq": -1, "start_acked": False, "finish_acked": False, "rejected": None,
        }
        self._samples_fh: Any = None
        self._results_fh: Any = None
        self.stale = False  # the server answered 409: nothing more is wanted for this attempt
        self.deleted = False
        self.next_try = 0.0  # monotonic time before which the uploader leaves it alone
        self.backoff: Any = None  # the uploader's Backoff for this spool
        self.volatile = False  # memory only: its directory could not be created (disk full)
        self.write_error: str | None = None  # the last write that failed, for the log
        # The run's lease keeper, once the daemon has spooled the finish: it renews until the uploader has delivered
        # the finish (or dropped the spool), so a backlog still uploading does not let the lease run out.
        self.lease_keeper: Any = None

    @property
    def key(self) -> str:
        return f"run-{self.run_id}-attempt-{self.attempt}"

    # --- create / open ---------------------------------------------------------------------

    @classmethod
    def create(cls, root: Path, run_id: Any, attempt: int, experiment: str | None) -> Spool:
        check_run_key(run_id, attempt)
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = root / f"run-{run_id}-attempt-{attempt}"
        if path.exists():
            # Same (run, attempt) handed out again: keep what is there and append after it.
            return cls.open(path)
        path.mkdir(mode=0o700)
        fsync_dir(root)
        spool = cls(path, run_id, attempt, experiment)
        atomic_write(
            path / "meta.json",
            _dumps({"run_id": run_id, "attempt": attempt, "experiment": experiment, "created_at": time.time()}),
        )
        spool._write_state()
        return spool

    @classmethod
    def create_or_volatile(cls, root: Path, run_id: Any, attempt: int, experiment: str | None) -> Spool:
        """create(), or, when the disk refuses (full, read-only), a memory-only spool whose `write_error` says
        why: the daemon fails the run with that reason and the finish still goes out."""
        try:
            return cls.create(root, run_id, attempt, experiment)
        except OSError as exc:
            check_run_key(run_id, attempt)
            spool = cls(root / f"run-{run_id}-attempt-{attempt}", run_id, attempt, experiment)
            spool.volatile = True
            spool.write_error = f"cannot write the spool: {exc}"
            log.error("run=%s attempt=%s: %s; the run is failed and its finish kept in memory", run_id, attempt,
                      spool.write_error)
            return spool

    @classmethod
    def open(cls, path: Path) -> Spool:
        meta = _read_json(path / "meta.json")
        m = _DIR_NAME.match(path.name)
        if not isinstance(meta, dict):
            if not m:
                raise ValueError(f"{path} is not a spool directory")
            run: Any = int(m["run"]) if m["run"].isdigit() else m["run"]
            meta = {"run_id": run, "attempt": int(m["attempt"]), "experiment": None}
        check_run_key(meta["run_id"], meta["attempt"])
        spool = cls(path, meta["run_id"], meta["attempt"], meta.get("experiment"))
        state = _read_json(path / "state.json")
        if isinstance(state, dict):
            spool._state.update({k: state[k] for k in spool._state if k in state})
        spool._start = _read_json(path / "start.json")
        spool._finish = _read_json(path / "finish.json")
        spool._results = _read_jsonl(path / "results.jsonl")
        acked = spool._state["acked_seq"]
        for sample in _read_jsonl(path / "samples.jsonl"):
            seq = sample.get("seq")
            if not isinstance(seq, int) or seq <= spool._last_seq:
                continue
            spool._last_seq = seq
            if seq > acked:
                spool._pending.append(sample)
        return spool

    @staticmethod
    def list_dirs(root: Path) -> list[Path]:
        if not root.is_dir():
            return []
        return sorted(p for p in root.iterdir() if p.is_dir() and _DIR_NAME.match(p.name))

    # --- writes by the run loop ------------------------------------------------------------

    def set_start(self, kernel_info: dict[str, Any]) -> None:
        """Spool the kernel's start event. Kept in memory (and sent) even when the write fails; the error is
        raised so that the daemon stops the run."""
        with self._lock:
            if self.deleted:
                return
            self._start = kernel_info
            if not self.volatile:
                self._noted(lambda: atomic_write(self.path / "start.json", _dumps(kernel_info)), raise_=True)

    def append_sample(self, sample: dict[str, Any]) -> bool:
        """Durably append one sample (fsync). False when the spool was dropped (stale attempt). A sample that
        cannot be written is not kept: OSError, the file cut back to its last whole line."""
        with self._lock:
            if self.deleted:
                return False
            if sample["seq"] <= self._last_seq:
                return True  # already spooled
            if self.volatile:
                raise OSError(self.write_error or "the spool is not on disk")
            self._noted(self._check_room, raise_=True)
            if self._samples_fh is None:
                self._samples_fh = open(self.path / "samples.jsonl", "ab", buffering=0)  # noqa: SIM115
            self._noted(lambda: _append(self._samples_fh, _dumps(sample)), raise_=True)
            self._last_seq = sample["seq"]
            self._pending.append(sample)
            return True

    def append_result(self, event: dict[str, Any]) -> None:
        """Spool a result event; kept in memory when the write fails (the error is raised)."""
        with self._lock:
            if self.deleted:
                return
            self._results.append(event)
            if self.volatile:
                return
            if self._results_fh is None:
                self._results_fh = open(self.path / "results.jsonl", "ab", buffering=0)  # noqa: SIM115
            self._noted(lambda: _append(self._results_fh, _dumps(event)), raise_=True)

    def set_finish(self, body: dict[str, Any]) -> None:
        """The finish: on disk if it can be, in memory regardless (it says why the run ended: it must go out)."""
        with self._lock:
            if self.deleted or self._finish is not None:
                return
            self._finish = body
            if not self.volatile:
                self._noted(lambda: atomic_write(self.path / "finish.json", _dumps(body)), raise_=False)
            self._close_files()

    def _check_room(self) -> None:
        """ENOSPC before the file system is quite full (RESERVE_BYTES left): the spool's last page may hold a few
        more samples, but the host's disk is full now, and a run measured on a full disk is stopped now."""
        st = os.statvfs(self.path)
        free = st.f_bavail * st.f_frsize
        if free < RESERVE_BYTES:
            raise OSError(errno.ENOSPC, f"No space left on device (the spool's file system has {free // 1024} KiB "
                                        f"free, under the {RESERVE_BYTES // 1024} KiB kept in reserve)")

    def _noted(self, write: Any, raise_: bool) -> None:
        try:
            write()
        except OSError as exc:
            if self.write_error is None:
                log.error("spool %s: write failed (%s); kept in memory and sent from there", self.key, exc)
            self.write_error = f"cannot write the spool: {exc}"
            if raise_:
                raise

    def set_no_finish(self, why: str) -> None:
        """The server already decided the run's fate (lease 409); only the samples still go up."""
        self.set_finish({"skip": True, "why": why})

    # --- reads and acknowledgements by the uploader ----------------------------------------

    @property
    def results(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._results)

    @property
    def start_event(self) -> dict[str, Any] | None:
        return self._start

    @property
    def finish_body(self) -> dict[str, Any] | None:
        return self._finish

    @property
    def acked_seq(self) -> int:
        return self._state["acked_seq"]

    @property
    def rejected(self) -> str | None:
        return self._state["rejected"]

    def start_pending(self) -> bool:
        return self._start is not None and not self._state["start_acked"]

    def finish_pending(self) -> bool:
        return self._finish is not None and not self._state["finish_acked"]

    def has_finish(self) -> bool:
        return self._finish is not None

    def finish_skipped(self) -> bool:
        return self._finish is not None and bool(self._finish.get("skip"))

    def pending_samples(self, limit: int) -> list[dict[str, Any]]:
        with self._lock:
            return self._pending[:limit]

    def pending_count(self) -> int:
        with self._lock:
            return len(self._pending)

    def ack_start(self) -> None:
        with self._lock:
            self._state["start_acked"] = True
            self._write_state()

    def ack_samples(self, through_seq: int) -> None:
        with self._lock:
            if through_seq <= self._state["acked_seq"]:
                return
            self._state["acked_seq"] = through_seq
            self._pending = [s for s in self._pending if s["seq"] > through_seq]
            self._write_state()

    def ack_finish(self) -> None:
        with self._lock:
            self._state["finish_acked"] = True
            self._write_state()

    def mark_rejected(self, reason: str) -> None:
        with self._lock:
            if self._state["rejected"] is None:
                self._state["rejected"] = reason[:500]
                self._write_state()

    def done(self) -> bool:
        with self._lock:
            return (
                not self._pending
                and (self._start is None or self._state["start_acked"])
                and self._finish is not None
                and self._state["finish_acked"]  # a skipped finish is acknowledged when the server has the `closed`
            )

    def delete(self) -> None:
        with self._lock:
            self.deleted = True
            self._close_files()
            shutil.rmtree(self.path, ignore_errors=True)

    # --- internals -------------------------------------------------------------------------

    def _write_state(self) -> None:
        """Record the acknowledgements; when the disk refuses, they stay in memory (a restart re-sends what the
        server already has, which it ingests idempotently)."""
        if not self.deleted and not self.volatile:
            self._noted(lambda: atomic_write(self.path / "state.json", _dumps(self._state)), raise_=False)

    def _close_files(self) -> None:
        for name in ("_samples_fh", "_results_fh"):
            fh = getattr(self, name)
            if fh is not None:
                fh.close()
                setattr(self, name, None)
