"""Hosts of one machine measured in turn (docs/reliability.md, rule 8, "Hosts of one machine").

Several runners on one machine (containers side by side, network namespaces, the faults harness) are several
hosts to the server, but their kernels share the machine's CPUs, memory bandwidth and disks: measured at once they
take from each other, and every one of them reads disturbed. So a suite run (a health check is one) groups its hosts
by machine when it starts (`plan`, by what their inventories say: app.results.checks.one_machine, the same running
kernel or the same installation, as a network pair's same_machine check reads them; not by their address, which
hosts behind one NAT share though they are separate machines) and keeps the groups on the suite run
(`SuiteRun.turns`). Within a group the hosts go one after another, in the order they were picked: a run whose turn
host (its own host; a serve run's, its driver's: the pair is the driver's measurement) is not the group's first
waits while a host ahead of it in the group has a run of the suite run queued, dispatched or running (`waits`, the
first check of app.jobs.pairing.wait: it answers "skip", so the host stays free for other people's runs). Hosts of
different machines still go at once. When a host's last run of the suite run ends, the hosts behind it (and the
peer, whose serve runs go with them) are rung (`hosts_to_ring`, from finish_run). A host ahead that is offline holds
no one: its runs wait for its runner, the others go on."""
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.experiments.registry import ROLE_OF
from app.hosts.models import Host
from app.hosts.service import is_online
from app.jobs.models import ACTIVE, Job, Run, SuiteRun
from app.results.checks import one_machine

# One machine's hosts of a suite run: {"hosts": [host ids, in the order they are measured], "why": what makes them one
# machine ("the same running kernel (boot id)")}; SuiteRun.turns keeps a list of them (JSON).
Turn = dict[str, Any]


def plan(hosts: list[Host]) -> list[Turn]:
    """The groups of hosts (two or more) that are one machine, each in the order given; hosts alone are left out."""
    groups: list[Turn] = []
    placed: set[int] = set()
    for i, a in enumerate(hosts):
        if a.id in placed:
            continue
        group, why = [a.id], ""
        for b in hosts[i + 1:]:
            if b.id in placed:
                continue
            # the same machine as any host of the group so far (one running kernel or one installation)
            for c in (h for h in hosts if h.id in group):
                same = one_machine(c.inventory or {}, b.inventory or {})
                if same is not None:
                    group.append(b.id)
                    why = why or same
                    break
        if len(group) > 1:
            placed.update(group)
            groups.append({"hosts": group, "why": why})
    return groups


def group_of(turns: list[Turn] | None, host_id: int) -> Turn | None:
    return next((t for t in turns or [] if host_id in t["hosts"]), None)


def words(turns: list[Turn] | None, host_id: int, names: dict[int, str]) -> str | None:
    """What the check's page says of a host measured in turn: "measured in turn: same machine as flt2, flt3 (the
    same running kernel (boot id)); 2nd of 3"."""
    t = group_of(turns, host_id)
    if t is None:
        return None
    others = ", ".join(names.get(h, str(h)) for h in t["hosts"] if h != host_id)
    n = t["hosts"].index(host_id) + 1
    nth = f"{n}{'st' if n == 1 else 'nd' if n == 2 else 'rd' if n == 3 else 'th'}"
    return f"measured in turn: same machine as {others} ({t['why']}); {nth} of {len(t['hosts'])}"


SERVES = tuple(kind for kind, role in ROLE_OF.items() if role == "serve")  # runs that go in their driver's turn


def _suite_run(session: Session, run: Run) -> SuiteRun | None:
    sr_id = session.scalar(select(Job.suite_run_id).where(Job.id == run.job_id))
    return session.get(SuiteRun, sr_id) if sr_id is not None else None


def _turn_host(session: Session, run: Run) -> int:
    """Whose turn a run belongs to: a serve run's driver's (the pair measures the driving host), else its own."""
    if run.experiment in SERVES:
        drives = session.scalars(select(Run.host_id).where(Run.job_id == run.job_id, Run.id != run.id)).all()
        if len(drives) == 1:
            return drives[0]
    return run.host_id


def waits(session: Session, run: Run) -> bool:
    """Whether a run waits for its turn: a host ahead of its turn host, on the same machine, has a run of the same
    suite run still queued, dispatched or running (and its runner is online)."""
    sr = _suite_run(session, run)
    if sr is None or not sr.turns:
        return False
    host = _turn_host(session, run)
    t = group_of(sr.turns, host)
    if t is None or t["hosts"][0] == host:
        return False
    ahead = t["hosts"][: t["hosts"].index(host)]
    # the runs of the hosts' own turns: a serve run on a host ahead belongs to its driver's (a two-host item between
    # the first two hosts picked, without a peer, serves on the one ahead in the other's turn)
    busy = session.scalars(select(Run.host_id).join(Job, Job.id == Run.job_id)
                           .where(Job.suite_run_id == sr.id, Run.host_id.in_(ahead), Run.status.in_(ACTIVE),
                                  Run.experiment.not_in(SERVES))
                           .distinct()).all()
    if not busy:
        return False
    return any(is_online(h) for h in session.scalars(select(Host).where(Host.id.in_(busy))))


def hosts_to_ring(session: Session, run: Run) -> list[int]:
    """When a run of a suite run ends: if its turn host has no run of the suite run left, the hosts behind it in its
    group, and the suite run's peer (it serves their two-host items)."""
    sr = _suite_run(session, run)
    if sr is None or not sr.turns:
        return []
    host = _turn_host(session, run)
    t = group_of(sr.turns, host)
    if t is None:
        return []
    left = session.scalar(select(Run.id).join(Job, Job.id == Run.job_id)
                          .where(Job.suite_run_id == sr.id, Run.host_id == host, Run.status.in_(ACTIVE),
                                 Run.experiment.not_in(SERVES)).limit(1))
    if left is not None:
        return []
    after: list[Any] = t["hosts"][t["hosts"].index(host) + 1:]
    return [*after, *([sr.peer_host_id] if sr.peer_host_id is not None and after else [])]
