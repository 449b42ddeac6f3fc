"""The process engine of the reference runs: `ReferencePhase` runs a job's plans (plan.py) one at a time in a
fresh directory under the run's work directory, each bounded by its own timeout and by the run's deadline; the
daemon's loop drives it (one `step` per loop turn, so a cancel or a shutdown stops the tool at once).

Each tool is an argv list (never a shell) in its own process group that dies with the runner (PDEATHSIG),
its output in files. A tool's own server (iperf3 -s, sockperf sr) gets a free loopback port, and the wait for
it to listen reads /proc/net (a listening TCP socket, a bound UDP one) so that no probe connection is spent:
iperf3's one-off server (-1) would take a probe for its one client and exit.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..process import child_setup, describe_exit, kernel_env
from . import ParseError, parse_text
from .plan import PORT, Plan, entry, missing

log = logging.getLogger("hostbench.reference")

MAX_OUTPUT_BYTES = 64 * 1024 * 1024  # larger than any report: a runaway tool is stopped
MAX_REFERENCES = 100  # the API takes at most 100 per finish
MIN_TIME_S = 3.0  # a tool given less time than this is not started
FINISH_MARGIN_S = 2.0  # left before the run's deadline for the finish itself
KILL_GRACE_S = 3.0
SERVER_READY_S = 5.0  # a reference tool's own server must listen within this
STDERR_TAIL = 600


# --- the reference server's port ------------------------------------------------------------------------

PROC_NET = Path("/proc/net")


# --- the reference server's port ------------------------------------------------------------------------


def free_port(proto: str = "tcp", host: str = "127.0.0.1", tries: int = 20) -> int:
    """A loopback port free for TCP, and for UDP too when the server binds UDP (sockperf's default)."""
    for _ in range(tries):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
        if proto != "udp":
            return port
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                u.bind((host, port))
            return port
        except OSError:
            continue
    raise OSError(f"no free loopback port for a {proto} server after {tries} tries")


def port_ready(port: int, proto: str = "tcp", proc_net: Path = PROC_NET) -> bool | None:
    """True when a socket listens (TCP, state 0A) or is bound (UDP) on this local port, as /proc/net
    lists it; None when /proc/net cannot be read (the caller then waits a moment instead)."""
    names = ("tcp", "tcp6") if proto == "tcp" else ("udp", "udp6")
    seen_any = False
    for name in names:
        try:
            lines = (proc_net / name).read_text().splitlines()[1:]
        except OSError:
            continue
        seen_any = True
        for line in lines:
            cols = line.split()
            if len(cols) < 4 or ":" not in cols[1]:
                continue
            try:
                local = int(cols[1].rsplit(":", 1)[1], 16)
            except ValueError:
                continue
            if local == port and (proto != "tcp" or cols[3] == "0A"):
                return True
    return False if seen_any else None


# --- running the plans ------------------------------------------------------------------------------------


def tail(path: Path, chars: int = STDERR_TAIL) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 4 * chars))
            return fh.read().decode("utf-8", errors="replace").strip()[-chars:]
    except OSError:
        return ""


# Settings that pin a reference's BLAS to kernels other than the ones it would pick for this CPU. A
# reference runs at its best on this host, so it does not inherit them from the runner's environment
# (this project's own machines export OPENBLAS_CORETYPE=Haswell, which held hpcc's HPL on an AVX-512
# Zen 5 to AVX2 kernels: 55 instead of 89 GFLOP/s at N=10000 on one process).
REFERENCE_ENV_DROP = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def reference_env(env: Mapping[str, str]) -> dict[str, str]:
    """A reference tool's environment: the kernels' (kernel_env) without REFERENCE_ENV_DROP, plus its plan's."""
    return {**{k: v for k, v in kernel_env().items() if k not in REFERENCE_ENV_DROP}, **env}


class Tool:
    """One reference process: argv list, own process group, dies with the runner, output to files."""

    def __init__(self, argv: list[str], cwd: Path, env: Mapping[str, str], output: str | None = None,
                 prefix: str = ""):
        self.cwd = cwd
        self.stdout_path, self.stderr_path = cwd / f"{prefix}.stdout", cwd / f"{prefix}.stderr"
        self.outputs = [self.stdout_path, self.stderr_path] + ([cwd / output] if output else [])
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(  # noqa: S603 - argv list of a resolved tool, never a shell
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd,
                env=reference_env(env), close_fds=True,
                preexec_fn=child_setup(os.getpid()),
            )
        self.started = time.monotonic()
        self._kill_at: float | None = None

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass

    def stop(self) -> None:
        if self._kill_at is None:
            self._kill_at = time.monotonic() + KILL_GRACE_S
            self._signal(signal.SIGTERM)

    @property
    def stopping(self) -> bool:
        return self._kill_at is not None

    def poll(self, wait_s: float) -> int | None:
        if self._kill_at is not None and time.monotonic() >= self._kill_at:
            self._signal(signal.SIGKILL)
        try:
            return self.proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            return None

    def output_bytes(self) -> int:
        total = 0
        for path in self.outputs:
            try:
                total += path.stat().st_size
            except OSError:
                pass
        return total

    def close(self) -> None:
        self._signal(signal.SIGKILL)  # whatever the tool left in its group (mpirun's ranks)
        try:
            self.proc.wait(KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            pass


class ReferencePhase:
    """Runs the plans one after another; `entries` holds one finished entry per plan, in order."""

    def __init__(self, plans: list[Plan], base_dir: Path, deadline_at: float,
                 path: str | None = None, broken: list[dict[str, Any]] | None = None):
        self.plans = plans[:MAX_REFERENCES]
        self.base_dir = base_dir
        self.deadline_at = deadline_at
        self.path = path  # PATH to find the tools on; None: the runner's own
        self.entries: list[dict[str, Any]] = []
        self.broken = list(broken or [])  # builders that failed; reported after the plans
        self._tool: Tool | None = None
        self._server: Tool | None = None  # the running plan's own server, if it has one
        self._plan: Plan | None = None
        self._argv: list[str] = []
        self._timeout_s = 0.0
        self._started_at = 0.0  # the running tool's start, Unix time
        self._stopped: str | None = None
        if len(plans) > MAX_REFERENCES:
            log.warning("%d reference runs planned; only the first %d are run", len(plans), MAX_REFERENCES)

    @property
    def done(self) -> bool:
        return self._tool is None and len(self.entries) >= len(self.plans)

    def report(self) -> list[dict[str, Any]]:
        """The `references` of the finish payload."""
        return (self.entries + self.broken)[:MAX_REFERENCES]

    def current(self) -> dict[str, Any] | None:
        """The running tool as the runner reports it to the server (a lease renewal's phase), or None."""
        tool, plan = self._tool, self._plan
        if tool is None or plan is None:
            return None
        return {"kind": "reference", "tool": plan.tool, "what": plan.what, "index": len(self.entries) + 1,
                "of": len(self.plans), "started_at": self._started_at,
                "typical_s": plan.typical_s or None, "cap_s": round(self._timeout_s, 1)}

    def step(self, wait_s: float = 0.2) -> None:
        """Start the next tool, or wait up to wait_s for the running one."""
        if self.done:
            return
        if self._tool is None:
            self._start_next()
            return
        tool, plan = self._tool, self._plan
        assert plan is not None
        elapsed = time.monotonic() - tool.started
        if not tool.stopping:
            if elapsed > self._timeout_s:
                self._stopped = f"timed out after {self._timeout_s:.0f} s"
                tool.stop()
            elif tool.output_bytes() > MAX_OUTPUT_BYTES:
                self._stopped = f"printed more than {MAX_OUTPUT_BYTES >> 20} MiB"
                tool.stop()
        rc = tool.poll(wait_s)
        if rc is not None:
            self._conclude(rc)

    def abort(self, reason: str) -> None:
        """Stop the running tool now (SIGTERM, SIGKILL after the grace) and mark every plan left as failed."""
        if self._tool is not None and self._plan is not None:
            self._stopped = reason
            self._tool.stop()
            deadline = time.monotonic() + KILL_GRACE_S + 1
            rc = None
            while rc is None and time.monotonic() < deadline:
                rc = self._tool.poll(0.1)
            self._conclude(rc if rc is not None else -signal.SIGKILL)
        for plan in self.plans[len(self.entries):]:
            self.entries.append(entry(plan.tool, "failed", f"not run: {reason}", list(plan.argv), plan.matches))

    def close(self) -> None:
        if self._tool is not None:
            self._tool.close()
            self._tool = None
        self._stop_server()
        shutil.rmtree(self.base_dir, ignore_errors=True)

    # --- one plan ----------------------------------------------------------------------------------

    def _start_next(self) -> None:
        plan = self.plans[len(self.entries)]
        argv = list(plan.argv)
        if plan.no_tool is not None:
            self.entries.append(entry(plan.tool, "none", plan.no_tool, argv, plan.matches))
            return
        if plan.unavailable is not None:
            self.entries.append(entry(plan.tool, "unavailable", plan.unavailable, argv, plan.matches, note=plan.note))
            return
        resolved: dict[str, str] = {}
        names = (*plan.needs, argv[0], *plan.server_argv[:1])
        for name in names:  # the tool itself first: "hpcc is not installed" before mpirun
            exe = shutil.which(name, path=self.path if self.path is not None else os.environ.get("PATH"))
            if exe is None:
                if name == argv[0] and plan.instead is not None:  # STREAM from hpcc: the other plan in its place
                    self.plans[len(self.entries)] = plan.instead
                    self._start_next()
                    return
                why = missing(name)
                if name != plan.tool:
                    why += f" ({plan.tool} needs it)"
                self.entries.append(entry(plan.tool, "unavailable", why, argv, plan.matches, note=plan.note))
                return
            resolved[name] = exe
        argv = [resolved.get(a, a) for a in argv]
        server_argv = [resolved.get(a, a) for a in plan.server_argv]
        left = self.deadline_at - time.monotonic() - FINISH_MARGIN_S
        if left < MIN_TIME_S:
            self.entries.append(entry(plan.tool, "failed",
                                      f"not run: {max(0.0, left):.0f} s left before the run's deadline",
                                      argv, plan.matches))
            return
        cwd = self.base_dir / f"ref-{len(self.entries)}"
        try:
            shutil.rmtree(cwd, ignore_errors=True)
            cwd.mkdir(parents=True, mode=0o700)
            for name, text in plan.files.items():
                (cwd / name).write_text(text)
            if server_argv:
                port = str(free_port(plan.server_proto))
                argv = [a.replace(PORT, port) for a in argv]
                server_argv = [a.replace(PORT, port) for a in server_argv]
                refused = self._start_server(server_argv, cwd, plan, int(port))
                if refused is not None:
                    self.entries.append(entry(plan.tool, "failed", refused[:2000], argv, plan.matches))
                    self._stop_server()
                    shutil.rmtree(cwd, ignore_errors=True)
                    return
            self._tool = Tool(argv, cwd, plan.env, plan.output)
        except (OSError, subprocess.SubprocessError) as exc:
            self.entries.append(entry(plan.tool, "failed", f"cannot start {argv[0]}: {exc}", argv, plan.matches))
            self._stop_server()
            shutil.rmtree(cwd, ignore_errors=True)
            return
        self._plan, self._argv = plan, argv
        self._started_at = round(time.time(), 3)
        self._timeout_s = min(plan.timeout_s, left)
        self._stopped = None
        log.info("reference %s started pid=%d timeout=%.0fs: %s", plan.tool, self._tool.proc.pid,
                 self._timeout_s, " ".join(argv))

    def _start_server(self, server_argv: list[str], cwd: Path, plan: Plan, port: int) -> str | None:
        """Start the plan's server and wait until it listens on the port; None, or why it did not."""
        server = self._server = Tool(server_argv, cwd, plan.env, prefix=".server")
        log.info("reference %s server started pid=%d: %s", plan.tool, server.proc.pid, " ".join(server_argv))
        limit = time.monotonic() + SERVER_READY_S
        while True:
            rc = server.poll(0.02)
            if rc is not None:
                said = tail(server.stderr_path) or tail(server.stdout_path)
                return (f"{plan.tool} server exited before listening ({describe_exit(rc)})"
                        + (f"; output: {said}" if said else ""))
            ready = port_ready(port, plan.server_proto)
            if ready is None:  # no /proc/net to look at: give it a moment
                time.sleep(0.5)
                return None
            if ready:
                return None
            if time.monotonic() > limit:
                return f"{plan.tool} server did not listen on 127.0.0.1:{port} within {SERVER_READY_S:.0f} s"

    def _stop_server(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.stop()
        limit = time.monotonic() + KILL_GRACE_S + 1
        while server.poll(0.05) is None and time.monotonic() < limit:
            pass
        server.close()

    def _conclude(self, rc: int) -> None:
        tool, plan, argv = self._tool, self._plan, self._argv
        assert tool is not None and plan is not None
        tool.close()
        self._stop_server()
        self._tool = self._plan = None
        try:
            self.entries.append(self._verdict(tool, plan, argv, rc))
        finally:
            shutil.rmtree(tool.cwd, ignore_errors=True)
        last = self.entries[-1]
        log.info("reference %s %s in %.1fs%s", plan.tool, last["status"], time.monotonic() - tool.started,
                 f": {last['reason']}" if last["reason"] else "")

    def _verdict(self, tool: Tool, plan: Plan, argv: list[str], rc: int) -> dict[str, Any]:
        stderr = tail(tool.stderr_path)

        def failed(text: str) -> dict[str, Any]:
            detail = f"{text}; stderr: {stderr}" if stderr else text
            return entry(plan.tool, "failed", detail[:2000], argv, plan.matches, note=plan.note)

        if self._stopped is not None:
            return failed(f"{plan.tool} stopped: {self._stopped}")
        out_path = tool.cwd / plan.output if plan.output else tool.stdout_path
        if rc != 0:
            return failed(f"{plan.tool} failed ({describe_exit(rc)})"
                          + (f"; output: {tail(out_path, 300)}" if not stderr else ""))
        try:
            with open(out_path, "rb") as fh:
                text = fh.read(MAX_OUTPUT_BYTES).decode("utf-8", errors="replace")
        except OSError as exc:
            return failed(f"{plan.tool} wrote no output {plan.output or 'on stdout'}: {exc.strerror or exc}")
        try:
            if callable(plan.parser):
                metrics = plan.parser(text)
            else:
                metrics = parse_text(plan.parser, text)["metrics"]
        except ParseError as exc:
            return failed(f"{plan.tool} output unreadable: {exc}")
        if plan.primary is not None:
            first = [m for m in metrics if m.get("name") == plan.primary][:1]
            for m in first:
                m["primary"] = True
            metrics = first + [m for m in metrics if all(m is not f for f in first)]
        return entry(plan.tool, "ok", None, argv, plan.matches, metrics, note=plan.note)
