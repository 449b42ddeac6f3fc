"""One verdict per result row and per run: what a figure means, said in words.

A figure is `valid` only when nothing is known against it. Otherwise it carries flags:

- invalid (the figure is wrong, not just disturbed): above the theoretical peak, below a physical floor,
  failed verification, a non-finite value;
- caution (the figure is a real measurement of something other than the host's capacity):
  `oversubscribed` (more threads than CPUs: each thread had at most CPUs / threads of a CPU),
  `disturbed` (the kernel's threads were on a CPU less than DISTURBED_SHARE of the wall time they could
  have had: other processes or the hypervisor took the rest; threads that sleep by design waited in the run
  queue more than DISTURBED_WAIT of the phase), `throttled` (a trace's rate fell while
  the kernel kept its CPU: the clock fell), `cpu_lost` (a trace's rate fell while the kernel lost its CPU),
  `unstable` (the repeats spread more than the CV bound), `lossy` (UDP lost more than LOSSY_PCT),
  `same_machine` (both "hosts" of a network pair are one machine), `page_cache` (a disk figure the page cache
  served, not the device), `loopback` (the kernel's network stack in memory, not a NIC), `cpu_bound` (a disk or
  network phase the host's own CPU quota throttled: it measured the quota, not the device or the link);
- invalid also: `implausible` (a disk figure no device can give: faster than its bus).

The verdict is the worst flag's kind: `invalid` before any caution; among cautions, the first of
CAUTION_ORDER. The flags keep every reason. docs/methodology/statistics.md says why each threshold.
"""
import math
from typing import Any, Literal

from hostbench_common.verdicts import DISTURBED_SHARE, DISTURBED_WAIT
from pydantic import BaseModel

FlagKind = Literal["oversubscribed", "disturbed", "cpu_bound", "throttled", "cpu_lost", "unstable", "lossy",
                   "same_machine", "page_cache", "loopback", "above_peak", "below_floor", "unverified", "non_finite",
                   "implausible"]
Verdict = Literal["valid", "oversubscribed", "disturbed", "cpu_bound", "throttled", "cpu_lost", "unstable", "lossy",
                  "same_machine", "page_cache", "loopback", "invalid"]
INVALID_KINDS = {"above_peak", "below_floor", "unverified", "non_finite", "implausible"}
# The worst first: a loopback figure that was also disturbed reads "disturbed".
CAUTION_ORDER: list[Verdict] = ["oversubscribed", "disturbed", "cpu_bound", "cpu_lost", "lossy", "unstable",
                                "throttled", "same_machine", "page_cache", "loopback"]


# A verdict that says what a figure is, not that anything went wrong with it: a loopback figure is the network
# stack's, and clean. Headlines (fleet view, /api/metrics, History, CLI, report) and trends use a row only when its
# verdict is valid or one of these.
SCOPE_VERDICTS = {"loopback"}


def usable(verdict: str | None) -> bool:
    return verdict == "valid" or verdict in SCOPE_VERDICTS


def none_usable(verdicts: list[str], what: str = "run") -> str:
    """Why there is no headline figure, counted by verdict: "no valid run yet; 3 disturbed, 1 oversubscribed"."""
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v] = counts.get(v, 0) + 1
    shown = ", ".join(f"{n} {v.replace('_', ' ')}" for v, n in sorted(counts.items(), key=lambda x: (-x[1], x[0])))
    return f"no valid {what} yet" + (f"; {shown}" if shown else "")


class Flag(BaseModel):
    kind: FlagKind
    severity: Literal["invalid", "caution"]
    text: str  # the reason in words, as the dashboard shows it
    value: float | None = None  # the figure behind it (the CPU share, the drop), where there is one


def flag(kind: FlagKind, text: str, value: float | None = None) -> Flag:
    return Flag(kind=kind, severity="invalid" if kind in INVALID_KINDS else "caution", text=text, value=value)


def verdict_of(flags: list[Flag]) -> Verdict:
    if any(f.severity == "invalid" for f in flags):
        return "invalid"
    kinds = {f.kind for f in flags}
    return next((v for v in CAUTION_ORDER if v in kinds), "valid")


def allowed_cpus(kernel_info: dict[str, Any], inventory: dict[str, Any]) -> int | None:
    """The CPUs the kernel could run on: its affinity mask (start event), else the host's logical CPUs."""
    aff = kernel_info.get("affinity_cpus")
    if isinstance(aff, list) and aff:
        return len(aff)
    n = (inventory.get("cpu") or {}).get("threads")
    return int(n) if isinstance(n, int) and n > 0 else None


def cpu_quota(kernel_info: dict[str, Any]) -> float | None:
    """The CPUs the host's cgroup allowed the kernel (the runner adds `cpu_quota` to its start event), if any."""
    q = kernel_info.get("cpu_quota")
    return float(q) if isinstance(q, int | float) and not isinstance(q, bool) and math.isfinite(q) and q > 0 else None


def share_flags(threads: int, reps: list[dict[str, Any]], cpus: int | None, *, judge_share: bool = True,
                quota: float | None = None) -> list[Flag]:
    """oversubscribed and disturbed for one row, from each repeat's `oversubscribed` and `cpu_share`. Without
    `judge_share` (threads that sleep by design: blocking I/O, a socket, a GPU; the experiment table's cpu_bound)
    a low share says nothing about other processes: their run-queue wait (`wait_share`) is judged instead.
    `quota`: the CPUs the host's own cgroup allows the kernel (the runner's `cpu_quota`): the share it cuts is the
    host's capacity, not a disturbance, so the share is judged against what the quota leaves each thread. Threads
    that sleep by design and were throttled by that quota (`throttled_share`) more than DISTURBED_WAIT of a phase
    measured the quota, not the device or the link: `cpu_bound`."""
    out: list[Flag] = []
    over = any(r.get("oversubscribed") is True for r in reps) or (cpus is not None and threads > cpus)
    shares = [(int(r.get("repeat") or 0), float(r["cpu_share"])) for r in reps
              if isinstance(r.get("cpu_share"), int | float) and not isinstance(r.get("cpu_share"), bool)
              and math.isfinite(r["cpu_share"])]
    worst = min(shares, key=lambda x: x[1]) if shares else None
    if over:
        where = f"{cpus} CPU{'s' if cpus != 1 else ''}" if cpus else "fewer CPUs"
        limit = f"; each thread could have at most {cpus}/{threads} of a CPU" if cpus else ""
        got = f" (CPU share {worst[1]:.2f})" if worst else ""
        out.append(flag("oversubscribed", f"oversubscribed: {threads} threads on {where}{limit}{got}. "
                                          "The figure is what the threads got when sharing, not the host's capacity",
                        worst[1] if worst else None))
    if worst is not None and judge_share:
        # The share each thread could have had: 1, or cpus / threads when oversubscribed.
        possible = min(1.0, cpus / threads) if (over and cpus) else 1.0
        if quota is not None and quota > 0:
            possible = min(possible, quota / threads)
        relative = worst[1] / possible
        if relative < DISTURBED_SHARE:
            of = f" of the {possible:.2f} it could have had" if possible < 1 else ""
            out.append(flag("disturbed", f"disturbed: CPU share {worst[1]:.2f}{of} in repeat {worst[0]} "
                                         f"(below {DISTURBED_SHARE:.2f}): other processes or the hypervisor "
                                         f"took {1 - relative:.0%} of the CPU time the kernel's threads needed",
                            worst[1]))
    # the time the host's own CPU quota held the threads counts as run-queue wait too: only the wait beyond it is
    # other processes' (the kernels' harness decides a retry the same way)
    quota_held = {int(r.get("repeat") or 0): max(0.0, float(r["throttled_share"])) for r in reps
                  if _finite(r.get("throttled_share"))}
    waits = [(int(r.get("repeat") or 0), float(r["wait_share"])) for r in reps if _finite(r.get("wait_share"))]
    if waits and not judge_share and not over:
        rep, wait = max(((rep, w - quota_held.get(rep, 0.0)) for rep, w in waits), key=lambda x: x[1])
        if wait > DISTURBED_WAIT:
            beyond = " beyond what its CPU quota held them" if quota_held.get(rep) else ""
            out.append(flag("disturbed", f"disturbed: in repeat {rep} the kernel's threads spent {wait:.0%} of the "
                                         f"phase waiting for a CPU{beyond} (run-queue wait, above "
                                         f"{DISTURBED_WAIT:.0%}): other processes ran there", wait))
    throttled = list(quota_held.items())
    if throttled and not judge_share:
        rep, share = max(throttled, key=lambda x: x[1])
        if share > DISTURBED_WAIT:
            out.append(flag("cpu_bound", f"CPU-bound: throttled by the host's CPU quota {share:.0%} of the phase "
                                         f"(repeat {rep}, above {DISTURBED_WAIT:.0%}): the figure is what the quota "
                                         "let the kernel's threads do, not what the device or the link delivers",
                            share))
    return out


def _finite(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def non_finite_repeats(reps: list[dict[str, Any]]) -> list[int]:
    return [int(r.get("repeat") or 0) for r in reps
            if not isinstance(r.get("value"), int | float) or not math.isfinite(float(r["value"]))]
