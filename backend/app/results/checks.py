"""The checks behind a network or disk verdict, and the words that say what a run's verdict checked.

verdict.py holds the flags and their order; service.compute_result calls these per row. What each requires,
and why each bound: docs/methodology/verdicts.md.
"""
import math
from functools import cache
from typing import Any, Literal

from hostbench_common.describe import DESCRIBE
from hostbench_common.verdicts import DISTURBED_SHARE, DISTURBED_WAIT, LOSSY_PCT, spread_bound

from app.experiments.registry import RUNS
from app.results.schemas import PairCheck
from app.results.verdict import Flag, cpu_quota, flag

IoMode = Literal["direct", "cache_dropped", "buffered"]

# The judgements a kernel may name in its --describe "checks" (runner/kernels/src/harness.h), beyond those every
# run gets: each applies to the run kinds whose kernel names it, never chosen by the kernel's name. "storage": how
# the I/O went, the page cache, the device's bus (disk_flags); "network": loss, the receiver's run-queue wait,
# loopback (net_flags); "cache_levels": the host's caches beside the rows' levels; "strong_scaling": fixed work
# over the thread counts (scaling.py). backend/tests/test_result_declared.py fails on a name not here.
CHECKS = ("storage", "network", "cache_levels", "strong_scaling")


@cache
def declared_checks(experiment: str) -> frozenset[str]:
    """The judgements the run kind's kernel names (`hbk <kernel> --describe` "checks", the describe snapshot)."""
    run = RUNS.get(experiment)
    return frozenset(DESCRIBE.get(run.kernel, {}).get("checks", ())) if run is not None else frozenset()

# The fastest a single device's bus can carry, MB/s: a figure above it is not the device's. PCIe 5.0 x4 (4 lanes x
# 32 GT/s x 128/130, the widest link an NVMe drive has). Not the rotational flag's SATA bound: virtio disks report
# rotational=1 (this 2-vCPU guest's /dev/vda does) and read at several GB/s from the host's cache. A striped array
# (md, LVM) can exceed one device's bus: its owner enters its peak (Hosts page), and the row is held to that instead.
BUS_MB_S = 15754.0
BUS_WORDS = "PCIe 5.0 x4, the widest link a single NVMe drive has"
# A read served in less than this did not come from a device: the fastest NVMe drives take about 10 µs, and the
# kernel's block layer alone costs more than 1 µs.
DEVICE_READ_FLOOR_US = 1.0


def _ids(inventory: dict[str, Any]) -> dict[str, str]:
    os_ = inventory.get("os") or {}
    return {k: v for k in ("boot_id", "machine_id") if isinstance(v := os_.get(k), str) and v}


def one_machine(a_inventory: dict[str, Any], b_inventory: dict[str, Any]) -> str | None:
    """Whether two hosts' inventories say they are one machine, in words: the same running kernel (boot id: runners
    in containers or network namespaces side by side) or the same installation (machine id); else None."""
    a, b = _ids(a_inventory), _ids(b_inventory)
    for key, words in (("boot_id", "the same running kernel (boot id)"),
                       ("machine_id", "the same installation (machine id)")):
        if key in a and a.get(key) == b.get(key):
            return words
    return None


def pair_check(drive_inventory: dict[str, Any], drive_address: str | None, serve_inventory: dict[str, Any],
               serve_address: str | None, peer_host_id: int | None) -> PairCheck:
    """Whether the two hosts of a network pair are one machine: the same running kernel (boot id: runners in
    containers beside each other), the same installation (machine id) or the same address."""
    a, b = _ids(drive_inventory), _ids(serve_inventory)
    if (words := one_machine(drive_inventory, serve_inventory)) is not None:
        return PairCheck(peer_host_id=peer_host_id, same_machine=True, why=words)
    if drive_address and drive_address == serve_address:
        return PairCheck(peer_host_id=peer_host_id, same_machine=True, why=f"the same address {serve_address}")
    known = [k.replace("_", " ") for k in ("boot_id", "machine_id") if k in a and k in b]
    why = "different " + " and ".join(f"{k}s" for k in known) if known else "no machine ids to compare"
    return PairCheck(peer_host_id=peer_host_id, same_machine=False,
                     why=f"{why}; addresses {drive_address or '?'} and {serve_address or '?'}")


def pair_flags(pair: PairCheck | None) -> list[Flag]:
    if pair is None or not pair.same_machine:
        return []
    return [flag("same_machine", f"same machine: the serving and the driving host are one machine ({pair.why}): "
                                 "the figure is this machine's network stack in memory, not a link between two")]


IO_MODES: tuple[IoMode, ...] = ("direct", "cache_dropped", "buffered")  # best first


def stated_io_mode(reps: list[dict[str, Any]]) -> IoMode | None:
    """The row's io_mode as its kernel's result lines state it (the worst of its repeats'), None from a kernel
    that does not say: buffered counts the page cache in; cache_dropped flushed its writes inside the timed
    window and dropped the file before every pass, so every byte went to or came from the device."""
    said = [r.get("io_mode") for r in reps if r.get("io_mode") in IO_MODES]
    return max(said, key=IO_MODES.index) if said else None  # type: ignore[arg-type]


def io_mode(kernel_info: dict[str, Any], params: dict[str, Any], reps: list[dict[str, Any]] | None = None) -> IoMode:
    """How a disk row's I/O went: the kernel's own word where its results state one (io_mode), else its start
    line's direct and cold_cache (buffered with the file dropped from the page cache before every pass), else
    the run's direct parameter."""
    stated = stated_io_mode(reps or [])
    if stated is not None:
        return stated
    direct = kernel_info.get("direct", params.get("direct"))
    if direct is True:
        return "direct"
    return "cache_dropped" if kernel_info.get("cold_cache") is True else "buffered"


def disk_flags(op: str | None, kernel_info: dict[str, Any], params: dict[str, Any], reps: list[dict[str, Any]],
               extra: dict[str, float], values: list[float], unit: str, user_peak: bool) -> list[Flag]:
    """page_cache: a file on a memory-backed filesystem, a buffered run with a warm cache, buffered writes (they
    land in the page cache unless fsync_writes), buffered reads answered faster than any device (readahead filled
    the cache: sub-microsecond p50); implausible: a throughput above the device's bus (unless its owner entered a
    peak: the row is held to that instead). A direct run below the device floor is below_floor (limits.py)."""
    mode = io_mode(kernel_info, params, reps)
    flushed = stated_io_mode(reps) == "cache_dropped"  # such a kernel fdatasyncs inside the timed window
    writes = op is not None and ("write" in op or op == "rw")
    p50 = extra.get("lat_p50_us")
    fast = isinstance(p50, float) and p50 < DEVICE_READ_FLOOR_US
    why = None
    if kernel_info.get("memory_backed") is True:
        why = "the test file is on a memory-backed filesystem (tmpfs): the figure is memory's, not a device's"
    elif mode == "buffered":  # the kernel's words where it says why (a warm cache, unflushed writes, tmpfs)
        why = next((f"buffered: {r['io_mode_why']}" for r in reps if isinstance(r.get("io_mode_why"), str)),
                   "buffered I/O with a warm cache: reads after the first pass and every write are the page "
                   "cache's, not the device's (direct I/O measures the device)")
    elif mode == "cache_dropped" and writes and not flushed and not kernel_info.get("fsync_writes"):
        why = ("buffered writes land in the page cache (written back only when the file is dropped): the device's "
               "write speed needs direct I/O")
    elif mode == "cache_dropped" and fast and not writes:
        why = (f"buffered reads answered in {p50:.2g} µs (p50), faster than any device: readahead filled the page "
               "cache and the reads were served from it (direct I/O measures the device)")
    if why is not None:
        return [flag("page_cache", f"page cache: {why}", p50 if fast else None)]
    if unit == "MB/s" and not user_peak and values:
        if max(values) > BUS_MB_S:
            return [flag("implausible", f"implausible for a device: {max(values):,.0f} MB/s is above {BUS_MB_S:,.0f} "
                                        f"MB/s, {BUS_WORDS}; a striped array's owner can enter its peak (Hosts page)",
                         max(values))]
    return []


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def peer_words(experiment: str, pair: PairCheck | None) -> str:
    run = RUNS.get(experiment)
    if run is not None and run.peak == "loopback":
        return "the server threads (this host's, in loopback)"
    host = f" (host {pair.peer_host_id})" if pair is not None and pair.peer_host_id is not None else ""
    return f"the peer{host}, the serving side's receiving threads,"


def peer_wait_flags(experiment: str, reps: list[dict[str, Any]], pair: PairCheck | None) -> list[Flag]:
    """disturbed: the receiving threads (the serving side of a stream or of udp_rr) spent more than DISTURBED_WAIT
    of the phase waiting for a CPU (the kernel's peer_wait_share, from the receiver's own report): the figure is
    what a busy receiver took, not what the path carries. The same bound as the driver's own wait_share."""
    waits = [(int(r.get("repeat") or 0), float(r["peer_wait_share"])) for r in reps
             if _number(r.get("peer_wait_share"))]
    if not waits:
        return []
    rep, wait = max(waits, key=lambda x: x[1])
    if wait <= DISTURBED_WAIT:
        return []
    return [flag("disturbed", f"disturbed: in repeat {rep} {peer_words(experiment, pair)} spent {wait:.0%} of the "
                              f"phase waiting for a CPU (run-queue wait, above {DISTURBED_WAIT:.0%}): other "
                              "processes ran there", wait)]


def net_flags(experiment: str, op: str | None, reps: list[dict[str, Any]],
              pair: PairCheck | None = None) -> list[Flag]:
    """loopback (a loopback run), lossy (UDP loss above LOSSY_PCT in any repeat), disturbed (the receiver's
    run-queue wait above DISTURBED_WAIT)."""
    out: list[Flag] = peer_wait_flags(experiment, reps, pair)
    run = RUNS.get(experiment)
    if run is not None and run.peak == "loopback":
        out.append(flag("loopback", "loopback: the kernel's network stack on one host, at memory speed; no NIC or "
                                    "link was measured (a two-host run measures one)"))
    losses: list[tuple[int, float]] = []
    for r in reps:
        rep = int(r.get("repeat") or 0)
        if isinstance(r.get("loss_pct"), int | float):
            losses.append((rep, float(r["loss_pct"])))
        elif op == "udp_rr" and isinstance(r.get("lost"), int) and isinstance(r.get("round_trips"), int):
            asked = r["lost"] + r["round_trips"]
            if asked > 0:
                losses.append((rep, 100.0 * r["lost"] / asked))
    if losses:
        rep, worst = max(losses, key=lambda x: x[1])
        if worst > LOSSY_PCT:
            what = "requests without a reply" if op == "udp_rr" else "datagrams"
            out.append(flag("lossy", f"lossy: {worst:.1f} % of the {what} lost in repeat {rep} (above {LOSSY_PCT:g} "
                                     "%): the figure is what got through a path that drops, not its capacity", worst))
    return out


def spread_flags(values: list[float], cv: float | None, params: dict[str, Any]) -> list[Flag]:
    bound = spread_bound(params)
    if len(values) < 2 or cv is None or cv <= bound:
        return []
    return [flag("unstable", f"unstable: the repeats spread {cv:.1%} (CV; {min(values):.4g}–{max(values):.4g}), above "
                             f"{bound:.1%}: no one figure stands for them", cv)]


def peer_cpu_words(raw: list[dict[str, Any]]) -> str:
    """What a pair's verdict says of its peer's CPU: every op's serving side reports its receiving threads' run-queue
    wait (tcp_rr's echo side at the driver's clean close); a runner from before 2026-11-29 sent none for tcp_rr."""
    if raw and all(_number(r.get("peer_wait_share")) for r in raw):
        return f"the peer's CPU: run-queue wait of its receiving threads ≤ {DISTURBED_WAIT:.0%} in every repeat"
    if any(_number(r.get("peer_wait_share")) for r in raw):
        return (f"the peer's CPU: run-queue wait ≤ {DISTURBED_WAIT:.0%} where the receiver reported it, not checked "
                "for the rest (the serving side sent no report: an older runner)")
    return "the peer's CPU: not checked (the serving side reported no run-queue wait: an older runner)"


def checked_words(experiment: str, params: dict[str, Any], raw: list[dict[str, Any]], *, judge_share: bool,
                  share_judged: bool, peak_known: bool, pair: PairCheck | None,
                  kernel_info: dict[str, Any], floored: bool) -> list[str]:
    """What a run's verdict checked, in words, so that "valid" names only those (the dashboard says them).
    floored: the kernel declares a figure that has a physical floor (limits.FLOORS)."""
    run = RUNS.get(experiment)
    checks = declared_checks(experiment)
    out = ["threads ≤ CPUs"]
    if share_judged and judge_share and (quota := cpu_quota(kernel_info)) is not None:
        out.append(f"CPU share ≥ {DISTURBED_SHARE:.2f} of what the host's CPU quota ({quota:.2f} CPU, its cgroup) "
                   "leaves each thread, in every repeat: the figure is this host's capacity under that quota")
    elif share_judged and judge_share:
        out.append(f"CPU share ≥ {DISTURBED_SHARE:.2f} in every repeat")
    elif share_judged and any(isinstance(r.get("wait_share"), int | float) for r in raw):
        out.append(f"run-queue wait ≤ {DISTURBED_WAIT:.0%} in every repeat (the threads sleep by design: their "
                   "CPU share says nothing)")
        if any(_number(r.get("throttled_share")) for r in raw):
            out.append(f"throttled by the host's CPU quota ≤ {DISTURBED_WAIT:.0%} of every repeat (else the figure "
                       "is the quota's, not the device's or the link's; the quota's hold is not counted as run-queue "
                       "wait)")
    elif share_judged:
        out.append("CPU share not judged: the threads sleep by design and the kernel reported no run-queue wait")
    repeats = {int(r.get("repeat") or 0) for r in raw}
    if len(repeats) >= 2:
        out.append(f"spread between repeats ≤ {spread_bound(params):.1%} (CV)")
    else:
        out.append("spread not checked (one repeat)")
    out.append("verified")
    if peak_known:
        out.append("within the peak")
    if floored:
        out.append("above the physical floor")
    if "network" in checks:
        if any(r.get("op") in ("udp_stream", "udp_rr") for r in raw) or params.get("op") in ("udp_stream", "udp_rr"):
            out.append(f"UDP loss ≤ {LOSSY_PCT:g} %")
        if run is not None and run.peak == "loopback":
            out.append("loopback: no NIC measured")
            if any(_number(r.get("peer_wait_share")) for r in raw):
                out.append(f"the server threads' run-queue wait ≤ {DISTURBED_WAIT:.0%} (streams, udp_rr)")
        else:
            if pair is not None:
                out.append(f"the peer is another machine ({pair.why})" if not pair.same_machine
                           else f"the peer is this machine ({pair.why})")
            else:
                out.append("whether the peer is another machine: not known")
            out.append(peer_cpu_words(raw))
    if "storage" in checks:
        modes = sorted({io_mode(kernel_info, params, [r]) for r in raw}, key=IO_MODES.index) or \
            [io_mode(kernel_info, params)]
        out.append(f"I/O mode {', '.join(m.replace('_', '-') for m in modes)}: a row the page cache served is "
                   "the page cache's, not the device's")
        out.append(f"reads slower than {DEVICE_READ_FLOOR_US:g} µs and throughput within the device's bus")
    return out
