"""The reference servers of a two-host serve run: once the serving kernel listens, and only when the job asked
for reference tools, the serving runner starts the server of the tool that matches the op on a free port of
every address (like the kernel, 0.0.0.0), waits until it listens and reports the port with the kernel's own
(POST .../listening, `reference_ports`). The driving runner's tools run against them (table.py,
`network_drive`). A tool that is not installed, or whose server does not come up, is left out: the driver
reports it "unavailable".

    *_stream: iperf3 -s (not -1: the driver runs one client per size and stream count, one after another)
    tcp_rr:   sockperf sr --tcp      udp_rr: sockperf sr (UDP)

The servers are argv lists (never a shell), children in their own process groups that die with the runner
(PDEATHSIG); `stop` ends them (SIGTERM, SIGKILL after the grace) and reaps them whenever the serve run ends.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from ..process import describe_exit
from . import iperf3, sockperf
from .engine import KILL_GRACE_S, SERVER_READY_S, Tool, free_port, port_ready, tail
from .plan import PORT, missing

log = logging.getLogger("hostbench.reference")

BIND = "0.0.0.0"  # noqa: S104 - the driver is another host, as for the serving kernel
TOOLS = ("iperf3", "sockperf")  # the names a listening report may carry (the API accepts only these)

# op -> tool -> (server argv with PORT, the protocol it listens on)
SERVERS: Mapping[str, Mapping[str, tuple[tuple[str, ...], str]]] = {
    "tcp_stream": {"iperf3": (tuple(iperf3.server_argv(BIND, PORT)), "tcp")},
    "udp_stream": {"iperf3": (tuple(iperf3.server_argv(BIND, PORT)), "tcp")},  # its control connection
    "tcp_rr": {"sockperf": (tuple(sockperf.server_argv(BIND, PORT, tcp=True)), "tcp")},
    "udp_rr": {"sockperf": (tuple(sockperf.server_argv(BIND, PORT, tcp=False)), "udp")},
}


class PeerServers:
    """The servers one serve run offers; `ports` and `unavailable` once `start` returned."""

    def __init__(self, op: str, base_dir: Path, path: str | None = None):
        self.op = op
        self.base_dir = base_dir
        self.path = path  # PATH to find the tools on; None: the runner's own
        self.ports: dict[str, int] = {}
        self.unavailable: dict[str, str] = {}
        self._tools: list[tuple[str, Tool]] = []

    def start(self) -> None:
        for tool, (argv, proto) in SERVERS.get(self.op, {}).items():
            why = self._start_one(tool, list(argv), proto)
            if why is not None:
                self.unavailable[tool] = why
                log.warning("reference server %s not offered: %s", tool, why)

    def _start_one(self, tool: str, argv: list[str], proto: str) -> str | None:
        exe = shutil.which(argv[0], path=self.path if self.path is not None else os.environ.get("PATH"))
        if exe is None:
            return missing(argv[0])
        try:
            port = free_port(proto, host=BIND)
            argv = [exe, *(a.replace(PORT, str(port)) for a in argv[1:])]
            cwd = self.base_dir / tool
            cwd.mkdir(parents=True, exist_ok=True, mode=0o700)
            proc = Tool(argv, cwd, {}, prefix=".server")
        except (OSError, subprocess.SubprocessError) as exc:
            return f"cannot start {argv[0]}: {exc}"
        self._tools.append((tool, proc))
        log.info("reference server %s started pid=%d: %s", tool, proc.proc.pid, " ".join(argv))
        limit = time.monotonic() + SERVER_READY_S
        while True:
            rc = proc.poll(0.02)
            if rc is not None:
                said = tail(proc.stderr_path) or tail(proc.stdout_path)
                return f"{tool} server exited before listening ({describe_exit(rc)})" + (
                    f"; output: {said}" if said else "")
            ready = port_ready(port, proto)
            if ready is None:  # no /proc/net to look at: give it a moment
                time.sleep(0.5)
                ready = True
            if ready:
                self.ports[tool] = port
                return None
            if time.monotonic() > limit:
                proc.stop()
                return f"{tool} server did not listen on port {port} within {SERVER_READY_S:.0f} s"

    def pids(self) -> list[int]:
        return [t.proc.pid for _, t in self._tools]

    def stop(self) -> None:
        """SIGTERM to every server, SIGKILL to what is left after the grace, each reaped. Idempotent."""
        tools, self._tools = self._tools, []
        for _, t in tools:
            t.stop()
        limit = time.monotonic() + KILL_GRACE_S + 1
        for name, t in tools:
            while t.poll(0.05) is None and time.monotonic() < limit:
                pass
            t.close()  # SIGKILL to its group, then waits: nothing is left unreaped
            rc = t.proc.returncode
            log.info("reference server %s stopped (%s)", name, describe_exit(rc) if rc is not None else "not reaped")
        if tools or self.base_dir.exists():
            shutil.rmtree(self.base_dir, ignore_errors=True)

