"""The stack's processes as /proc shows them: CPU seconds (exited children counted) and memory."""
import time

import psutil

# --- the stack's processes --------------------------------------------------------------------------------------

def _procs(pid: int) -> list:
    try:
        p = psutil.Process(pid)
        return [p, *p.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def api_procs(pid: int, dashboard: bool) -> list:
    """One kind of the API's processes under its supervisor (hostbench_stack.serve, `pid`): the dashboard's workers
    run at a raised nice, the supervisor and the runners' control workers at the stack's own."""
    def niced(p) -> bool:  # noqa: ANN001 - a psutil.Process
        try:
            return bool(p.nice() > 0)
        except Exception:  # noqa: BLE001 - a worker that exited
            return False

    return [p for p in _procs(pid) if niced(p) == dashboard]


def cpu_s(procs: list) -> float:
    """CPU seconds of a process tree (the root first): the live processes' own, plus what the root's children
    that already exited used (PostgreSQL's backends come and go with connections; the postmaster reaps them)."""
    total = 0.0
    for i, p in enumerate(procs):
        try:
            t = p.cpu_times()
            total += t.user + t.system + (t.children_user + t.children_system if i == 0 else 0.0)
        except Exception:  # noqa: BLE001, S112 - a worker that exited
            continue
    return total


def rss_mib(procs: list) -> float:
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except Exception:  # noqa: BLE001, S112
            continue
    return total / 2**20


class Meter:
    """CPU seconds of a group of processes between mark() and read()."""

    def __init__(self, procs_fn):
        self.procs_fn = procs_fn
        self.t0 = self.c0 = 0.0

    def mark(self) -> None:
        self.t0, self.c0 = time.monotonic(), cpu_s(self.procs_fn())

    def cores(self) -> float:
        return round((cpu_s(self.procs_fn()) - self.c0) / max(1e-6, time.monotonic() - self.t0), 2)


