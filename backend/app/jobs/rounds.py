"""The round scheduler of hosts tested together (docs/reliability.md, rule 8, "Meshes").

All pairs of n hosts in rounds by the circle method (a round-robin tournament): in each round every host is in
at most one pair, so no host serves and drives at once, and every unordered pair meets once in n - 1 rounds
(n even; n odd: n rounds, one host sits each out). Both ways: the same rounds again with the roles swapped,
2(n - 1). The pairs of a round run at once; their jobs are ordinary two-host jobs, so the pairing rules
(app.jobs.pairing) start each pair. The round is a barrier: a run of round r is not handed out while a run of
an earlier round of its mesh is queued or running (`later_round`), and when the last run of a round ends the
hosts of the next are rung (`hosts_to_ring`). A pair that fails ends the round for itself only; the next round
still starts, so nothing waits on a pair that will never finish."""
from sqlalchemy import select
from sqlalchemy.orm import Session, aliased

from app.jobs.mesh_models import MeshJob
from app.jobs.models import ACTIVE, Run

Pair = tuple[int, int]  # (serving host, driving host)


def circle(hosts: list[int], both_ways: bool) -> list[list[Pair]]:
    """The rounds of all pairs of `hosts` (distinct, at least 2): each round a list of (serve, drive) pairs with
    no host twice. One way: each unordered pair once; both ways: each ordered pair once."""
    ring: list[int | None] = list(hosts) + ([None] if len(hosts) % 2 else [])
    m = len(ring)
    rounds: list[list[Pair]] = []
    for r in range(m - 1):
        pairs: list[Pair] = []
        for i in range(m // 2):
            a, b = ring[i], ring[m - 1 - i]
            if a is None or b is None:
                continue  # a bye: that host sits this round out
            # who serves: the upper row's host, the fixed one every other round (Berger tables), so over the
            # rounds each host serves about as often as it drives
            pairs.append((b, a) if i == 0 and r % 2 else (a, b))
        rounds.append(pairs)
        ring = [ring[0], ring[-1], *ring[1:-1]]  # hold the first, turn the rest one place
    if both_ways:
        rounds += [[(d, s) for s, d in pairs] for pairs in rounds]
    return rounds


def later_round(session: Session, run: Run) -> bool:
    """Whether this run belongs to a round of a mesh whose earlier rounds have runs still queued or running."""
    mine = session.scalar(select(MeshJob).where(MeshJob.job_id == run.job_id))
    if mine is None or mine.round == 0:
        return False
    earlier = aliased(MeshJob)
    q = (select(Run.id).join(earlier, earlier.job_id == Run.job_id)
         .where(earlier.mesh_id == mine.mesh_id, earlier.round < mine.round, Run.status.in_(ACTIVE)).limit(1))
    return session.scalar(q) is not None


def hosts_to_ring(session: Session, run: Run) -> list[int]:
    """When a mesh run ends: if it was the last active run of its round, the hosts of the next round (their runs
    may go now); else none."""
    mine = session.scalar(select(MeshJob).where(MeshJob.job_id == run.job_id))
    if mine is None:
        return []
    same = aliased(MeshJob)
    left = session.scalar(select(Run.id).join(same, same.job_id == Run.job_id)
                          .where(same.mesh_id == mine.mesh_id, same.round <= mine.round,
                                 Run.status.in_(ACTIVE)).limit(1))
    if left is not None:
        return []
    nxt = aliased(MeshJob)
    first = session.scalar(select(nxt.round).where(nxt.mesh_id == mine.mesh_id, nxt.round > mine.round)
                           .order_by(nxt.round).limit(1))
    if first is None:
        return []
    return sorted(set(session.scalars(select(Run.host_id).join(nxt, nxt.job_id == Run.job_id)
                                      .where(nxt.mesh_id == mine.mesh_id, nxt.round == first))))
