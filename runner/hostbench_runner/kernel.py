"""The kernel binary: its published parameter schemas, and one running kernel process.

A kernel is started with an argv list (never a shell), stdin closed, stdout piped and parsed line
by line, stderr kept in a bounded buffer for error reasons. It runs in its own process group so it
can be stopped as a group, and with PR_SET_PDEATHSIG so it dies with the runner.
"""

from __future__ import annotations

import json
import logging
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hostbench_common.process import child_setup, kernel_env

from .errors import KernelUnavailable
from .protocol import MAX_LINE_BYTES

log = logging.getLogger("hostbench.kernel")

STDERR_KEEP_BYTES = 16 * 1024
class KernelCatalog:
    """`hbk <kernel> --describe` once per kernel, cached; retried at the next assignment if it failed."""

    def __init__(self, kernel_bin: Path, timeout_s: float = 10.0, looked: Sequence[str] = ()):
        self.kernel_bin = Path(kernel_bin)
        self.looked = tuple(looked)  # where config.locate_kernel looked, for the error when it is missing
        self.timeout_s = timeout_s
        self._describe: dict[str, dict[str, Any]] = {}
        self._build_info: dict[str, Any] | None = None
        self._build_info_tried = False

    def _run(self, args: list[str]) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(  # noqa: S603 - argv list of our own binary, never a shell
            [str(self.kernel_bin), *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=self.timeout_s,
            env=kernel_env(),
            check=False,
        )

    def describe(self, kernel: str) -> dict[str, Any]:
        if kernel in self._describe:
            return self._describe[kernel]
        if not self.kernel_bin.is_file():
            if self.looked:
                raise KernelUnavailable("kernel binary hbk not found; looked at: " + "; ".join(self.looked))
            raise KernelUnavailable(f"kernel binary {self.kernel_bin} not found (build runner/kernels first)")
        try:
            proc = self._run([kernel, "--describe"])
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise KernelUnavailable(f"{self.kernel_bin} {kernel} --describe: {exc}") from exc
        if proc.returncode != 0:
            tail = proc.stderr.decode(errors="replace")[-300:].strip()
            raise KernelUnavailable(
                f"{self.kernel_bin} {kernel} --describe exited with {proc.returncode}: {tail}"
            )
        try:
            doc = json.loads(proc.stdout)
        except ValueError as exc:
            raise KernelUnavailable(f"{kernel} --describe did not print JSON: {exc}") from exc
        schema = doc.get("parameters") if isinstance(doc, dict) else None
        if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
            raise KernelUnavailable(f"{kernel} --describe has no parameters schema")
        self._describe[kernel] = doc
        return doc

    def schema(self, kernel: str) -> dict[str, Any]:
        return self.describe(kernel)["parameters"]

    def load(self, kernels: list[str]) -> None:
        for kernel in kernels:
            try:
                doc = self.describe(kernel)
                log.info("kernel %s described: %d parameters", kernel, len(doc["parameters"]["properties"]))
            except KernelUnavailable as exc:
                log.error("kernel %s unavailable (will retry at the next assignment): %s", kernel, exc)

    def build_info(self) -> dict[str, Any] | None:
        """`hbk --version` if the binary has it, else version facts from a describe, else None."""
        if not self._build_info_tried and self.kernel_bin.is_file():
            self._build_info_tried = True
            try:
                proc = self._run(["--version"])
                text = proc.stdout.decode(errors="replace").strip()
                if proc.returncode == 0 and text:
                    try:
                        parsed = json.loads(text)
                        self._build_info = parsed if isinstance(parsed, dict) else {"version": text[:200]}
                    except ValueError:
                        self._build_info = {"version": text.splitlines()[0][:200]}
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self._build_info is not None:
            return self._build_info
        for doc in self._describe.values():
            facts: dict[str, Any] = {k: doc[k] for k in ("version", "build", "compiler", "git") if k in doc}
            if facts:
                return facts
        return None


class KernelProcess:
    def __init__(self, argv: list[str], cwd: Path):
        self.argv = argv
        self.proc = subprocess.Popen(  # noqa: S603 - argv list, never a shell
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=kernel_env(),
            close_fds=True,
            preexec_fn=child_setup(os.getpid()),
        )
        self.pid = self.proc.pid
        self._sel = selectors.DefaultSelector()
        for stream in (self.proc.stdout, self.proc.stderr):
            assert stream is not None
            os.set_blocking(stream.fileno(), False)
            self._sel.register(stream, selectors.EVENT_READ)
        self._buf = b""
        self._stderr = bytearray()
        self.stdout_eof = False
        self._stderr_eof = False
        self._kill_at: float | None = None

    @property
    def eof(self) -> bool:
        return self.stdout_eof and self._stderr_eof

    def read_lines(self, timeout_s: float) -> list[bytes]:
        """Complete stdout lines available within timeout_s. At EOF a last partial line counts
        as a line; a line longer than the protocol allows is returned as is (the parser refuses it)."""
        lines: list[bytes] = []
        if self.eof:
            return lines
        for key, _ in self._sel.select(timeout_s):
            stream = key.fileobj
            try:
                chunk = os.read(stream.fileno(), 65536)  # type: ignore[union-attr]
            except BlockingIOError:
                continue
            if stream is self.proc.stderr:
                if chunk:
                    self._stderr += chunk
                    del self._stderr[:-STDERR_KEEP_BYTES]
                else:
                    self._stderr_eof = True
                    self._sel.unregister(stream)
                continue
            if chunk:
                self._buf += chunk
                *complete, self._buf = self._buf.split(b"\n")
                lines.extend(complete)
                if len(self._buf) > MAX_LINE_BYTES:
                    lines.append(self._buf)
                    self._buf = b""
            else:
                self.stdout_eof = True
                self._sel.unregister(stream)
                if self._buf.strip():
                    lines.append(self._buf)
                self._buf = b""
        return [line for line in lines if line.strip()]

    def stderr_tail(self, chars: int = 800) -> str:
        text = bytes(self._stderr).decode("utf-8", errors="replace").strip()
        return text[-chars:]

    # --- stopping --------------------------------------------------------------------------

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            pass

    def request_stop(self, grace_s: float) -> None:
        """SIGTERM to the group now; SIGKILL once grace_s has passed (see `poll_stop`)."""
        if self._kill_at is None:
            self._kill_at = time.monotonic() + grace_s
            self._signal_group(signal.SIGTERM)

    @property
    def stopping(self) -> bool:
        return self._kill_at is not None

    def poll_stop(self) -> None:
        if self._kill_at is not None and time.monotonic() >= self._kill_at:
            self._signal_group(signal.SIGKILL)

    def kill(self) -> None:
        self._signal_group(signal.SIGKILL)

    def wait(self, timeout_s: float) -> int:
        try:
            return self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            return self.proc.wait()

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    def close(self) -> None:
        self._sel.close()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        # Anything left in the group (a kernel's own children) goes too.
        self._signal_group(signal.SIGKILL)
