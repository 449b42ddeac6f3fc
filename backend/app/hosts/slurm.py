"""Draining a host's Slurm node: `scontrol update nodename=NODE state=drain reason=REASON`, run by this server
(argv, no shell) with the Slurm client of the machine it runs on (its SLURM_CONF, its munge). Opt-in: off unless
HOSTBENCH_SLURM_DRAIN=1 (app.core.config), and every drain, done or refused by Slurm, is an audit event
`host.slurm_drain`.

The host's node is its label `slurm_node`: a runner started in a Slurm job step sets it from SLURMD_NODENAME
(runner/hostbench_runner/config.py), so a host keeps its node name across one-shot jobs.

Entry points: `drain(session, host, reason, user_name)` (a health check's FAIL calls it for each failed host of a
check started with draining asked for) and `POST /api/hosts/{id}/slurm-drain` (`./hostbench slurm drain HOST`)."""
from __future__ import annotations

import re
import subprocess
from typing import Annotated

from fastapi import APIRouter
from pydantic import BaseModel, Field, StringConstraints
from sqlalchemy.orm import Session

from app.audit.service import record
from app.core.bounds import Id
from app.core.config import get_settings
from app.core.deps import SessionDep
from app.core.errors import Conflict, Unavailable, Unprocessable
from app.hosts import service
from app.hosts.models import Host
from app.users.auth import AdminDep

SLURM_NODE_LABEL = "slurm_node"
# Slurm node names as hostlist writes them: letters, digits, '.', '_', '-' (no brackets, commas or spaces, which
# would name several nodes or split scontrol's argument)
NODE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
SCONTROL_TIMEOUT_S = 30.0
# A reason is one line Slurm shows in sinfo -R; printable, no newline or '=' games needed: it is one argv item
Reason = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200,
                                          pattern=r"^[^\x00-\x1f\x7f]+$")]


def node_of(host: Host) -> str:
    node = (host.labels or {}).get(SLURM_NODE_LABEL)
    if not isinstance(node, str) or not NODE_NAME.match(node):
        raise Unprocessable(f"host {host.name} has no Slurm node name (label {SLURM_NODE_LABEL}): it did not join "
                            "from a Slurm job step")
    return node


def drain_argv(node: str, reason: str) -> list[str]:
    return ["scontrol", "update", f"nodename={node}", "state=drain", f"reason={reason}"]


def drain(session: Session, host: Host, reason: str, user_name: str) -> str:
    """Drain the host's node with the reason; returns the node's name. Refused (409) while draining is off; a
    failure of scontrol is audited and answered 503 with what scontrol said."""
    if not get_settings().hostbench_slurm_drain:
        raise Conflict("draining Slurm nodes is off on this server (set HOSTBENCH_SLURM_DRAIN=1)")
    node = node_of(host)
    argv = drain_argv(node, reason)
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=SCONTROL_TIMEOUT_S, check=False)
        failure = None if r.returncode == 0 else (r.stderr or r.stdout).strip()[:300] or f"exit {r.returncode}"
    except (OSError, subprocess.TimeoutExpired) as exc:
        failure = f"{type(exc).__name__}: {exc}"[:300]
    record(session, user_name, "host.slurm_drain", f"host {host.name}", host_id=host.id, node=node, reason=reason,
           ok=failure is None, **({"error": failure} if failure else {}))
    session.commit()
    if failure is not None:
        raise Unavailable(f"scontrol could not drain node {node}: {failure}")
    return node


router = APIRouter(prefix="/api/hosts", tags=["hosts"])


class SlurmDrain(BaseModel):
    reason: Reason = Field(description="shown by Slurm (sinfo -R) as the node's reason")


class SlurmDrained(BaseModel):
    host_id: int
    node: str
    reason: str


@router.post("/{host_id:int}/slurm-drain", response_model=SlurmDrained,
             responses={409: {"description": "draining is off on this server"},
                        422: {"description": "the host has no Slurm node name, or a bad reason"},
                        503: {"description": "scontrol failed"}})
def slurm_drain(host_id: Id, body: SlurmDrain, p: AdminDep, session: SessionDep) -> SlurmDrained:
    """Drain the host's Slurm node with the reason (admins; opt-in on the server; audited)."""
    host = service.get_host(session, host_id)
    node = drain(session, host, body.reason, p.name)
    return SlurmDrained(host_id=host.id, node=node, reason=body.reason)
