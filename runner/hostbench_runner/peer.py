"""Serving a peer (a two-host network job, network_serve): once the serving kernel listens, its port is reported
to the server (POST .../listening) from a thread of its own, with the ports of the reference servers the run offers
the driving host's tools (hostbench_common/reftools/serve.py) when the job asked for reference tools. The servers
are stopped when the run ends, however it ends."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hostbench_common.experiments import ROLE_OF
from hostbench_common.reftools.serve import PeerServers
from hostbench_common.runstatus import RunStatus

from .api import ApiClient, Backoff, call_with_retry
from .errors import Rejected, Retryable, Stale, Unauthorized

log = logging.getLogger("hostbench.daemon")


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


def servers_dir(experiment: Any, wants_reference: bool, work_dir: Path | None,
                params: dict[str, Any] | None) -> Path | None:
    """Where a serve run's reference servers run; None when it offers none (the job asked for no reference tools)."""
    serving = isinstance(experiment, str) and ROLE_OF.get(experiment) == "serve"
    if not serving or not wants_reference or work_dir is None or params is None:
        return None
    return work_dir / "reference-servers"


@dataclass
class PeerServing:
    """A serve run's side towards its peer: the port being reported, and the reference servers it offers."""

    listening: Listening | None = None  # a serving kernel's port, being reported to the server
    # with reference tools: the servers the peer's tools run against, stopped when the run ends
    servers: PeerServers | None = None

    def kernel_listens(self, api: ApiClient, run_id: Any, attempt: int, port: int, backoff: Backoff,
                       give_up_after_s: float, revoked: threading.Event, op: str | None = None,
                       servers_dir: Path | None = None) -> None:
        """The serving kernel listens on `port`: start the reference servers for `op` when servers_dir is given,
        then report the port, with theirs."""
        ports = self._start_servers(run_id, op, servers_dir) if servers_dir is not None else None
        self.listening = Listening(api, run_id, attempt, port, backoff, give_up_after_s, revoked,
                                   reference_ports=ports)

    def _start_servers(self, run_id: Any, op: str | None, servers_dir: Path) -> dict[str, int] | None:
        """Start the reference servers a serve run offers its peer; their ports, or None when it has them already."""
        if self.servers is not None:
            return None
        self.servers = PeerServers(str(op), servers_dir)
        try:
            self.servers.start()
        except Exception:  # a bug here must not fail the serve run: its peer's tools report unavailable
            log.exception("run=%s: cannot start the reference servers", run_id)
            self.stop_servers(run_id)
            return {}
        for tool, why in self.servers.unavailable.items():
            log.warning("run=%s: no %s reference server: %s", run_id, tool, why)
        return dict(self.servers.ports)

    def stop_servers(self, run_id: Any) -> None:
        servers, self.servers = self.servers, None
        if servers is not None:
            try:
                servers.stop()
            except Exception:
                log.exception("run=%s: stopping the reference servers failed", run_id)

    def stop_reporting(self) -> None:
        if self.listening is not None:
            self.listening.stop.set()

    def stop_reason(self) -> tuple[str | None, str] | None:
        """(None, why) when the server refused this attempt's port, ("failed", why) when it could not be reported."""
        if self.listening is not None:
            if self.listening.stale:
                return (None, self.listening.stale)
            if self.listening.failed:
                return (RunStatus.failed, self.listening.failed)
        return None
