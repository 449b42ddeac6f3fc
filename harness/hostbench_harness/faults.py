"""Hosts made bad on purpose, for the health check's injected-fault measurement (issue 29) and its test: N runners
on this machine, each in its own network namespace on one bridge (each its own "host", its own machine id), some
held back in one way each:

- `cpu`: its runner (and every kernel it starts) in a cgroup held to half a CPU (cpulimit.CpuLimit);
- `disk`: its runner's cgroup throttled on the device under its work directory (cgroup v1 blkio
  `throttle.{read,write}_bps_device`, or v2 `io.max`), to DISK_BPS;
- `link`: its namespace's link shaped with `tc` (a token bucket on both ends of its veth) to LINK_MBIT.

`./hostbench faults` starts a stack and the fleet (each namespace checked to reach the bridge over TCP first:
`tcp_reachable`), runs the health check on all of them through `./hostbench check --wait` (the server measures
them in turn, as hosts of one machine: app.jobs.turns; so a check's own runs on the undisturbed hosts are the
learned bands' siblings, and `--warm` is needed only to start from bands learned apart), repeats it, and prints a
table and one JSON line. Needs root (namespaces, cgroups, tc)."""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from hostbench_common.experiments import EXPERIMENTS, RUNS
from hostbench_stack.cpulimit import CGROUP, CpuLimit
from hostbench_stack.netns import bridge_add
from hostbench_stack.stack import Stack

# 10.231.60.0/24: the bridge at .1, host i at .i+2 (another `tag` and subnet: another fleet beside it). Apart from
# every other range of the tests that may run beside it: pair 77, mesh 78, netns.free_pair's 88-159 (the fleet
# install test's /30s). It was 88: when the fleet install test took 10.231.88.0/30 first, the replies to hosts .2
# and .3 went out that /30's veth, and their runners could not connect (the CI hang of 2026-11-28/29).
SUBNET = 60
BRIDGE_IP = f"10.231.{SUBNET}.1"
DISK_BPS = 8 * 2**20  # 8 MiB/s: a tenth of a slow disk, far below any real one here
# Every host's link is shaped to a 1 GbE NIC's rate (a fleet's hosts have NICs; the veth alone goes at 20 Gbit/s and
# more, and a TCP stream at that rate takes both of this machine's CPUs, sender and receiver: the stack's own work
# beside it then left every undisturbed host's stream disturbed, and the link host, with no valid sibling to the same
# peer, without a baseline: 2026-11-29, check 1 of the first 8-host run); the `link` fault is a tenth of it
HOST_LINK_MBIT = 1000
LINK_MBIT = 100
CPU_SHARE = 0.5
# The runners (and their kernels) run ahead of the rest of this machine's work: each stands for a machine of its
# own, whose CPUs nobody else's processes share. Their CPU share then measures what their own host does to them
# (its quota, its neighbours in the emulation when pinned together), not a busy build beside the test.
HOST_NICE = -10
NICE_10_WEIGHT = 9548  # the kernel's sched_prio_to_weight for nice -10 (nice 0: 1024)
FAULTS = ("cpu", "disk", "link")


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def why_not() -> str | None:
    if os.geteuid() != 0:
        return "network namespaces, cgroups and tc need root"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return f"the `{tool}` command is missing"
    return None


@dataclass
class FaultHost:
    name: str
    ns: str
    ip: str
    fault: str | None
    outer: str
    inner: str
    bridge: str
    bridge_ip: str
    state: Path
    labels: str | None = None  # its runner's labels, when not the fleet's (the peer)
    cleanups: list[Any] = field(default_factory=list)


class DiskLimit:
    """A cgroup throttled on one block device (v1 blkio, else v2 io.max)."""

    def __init__(self, name: str, device: str, bps: int):
        self.device, self.bps = device, bps
        self.name = f"hostbench-{name}-{os.getpid()}"
        v1 = CGROUP / "blkio"
        self.path = v1 / self.name if (v1 / "blkio.throttle.read_bps_device").exists() else CGROUP / self.name

    def __enter__(self) -> "DiskLimit":
        self.path.mkdir(exist_ok=True)
        if self.path.parent.name == "blkio":
            for f in ("blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device"):
                (self.path / f).write_text(f"{self.device} {self.bps}")
        else:
            sub = CGROUP / "cgroup.subtree_control"
            if "io" not in sub.read_text().split():
                sub.write_text("+io")
            (self.path / "io.max").write_text(f"{self.device} rbps={self.bps} wbps={self.bps}")
        return self

    def add(self, pid: int) -> None:
        (self.path / "cgroup.procs").write_text(str(pid))

    def __exit__(self, *exc: object) -> None:
        for _ in range(50):
            with suppress(OSError):
                for pid in (self.path / "cgroup.procs").read_text().split():
                    with suppress(OSError):
                        (self.path.parent / "cgroup.procs").write_text(pid)
                self.path.rmdir()
                return
            time.sleep(0.1)


def block_device(path: Path) -> str:
    """major:minor of the whole disk under `path` (a partition's parent: throttling applies to disks)."""
    st = os.stat(path)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    sys_dev = Path(f"/sys/dev/block/{major}:{minor}")
    if not sys_dev.exists():
        raise RuntimeError(f"{path} is on {major}:{minor}, not a block device (tmpfs, overlay?): no disk to throttle")
    if (sys_dev / "partition").exists():
        major, minor = (int(x) for x in (sys_dev.resolve().parent / "dev").read_text().split(":"))
    return f"{major}:{minor}"


def _teardown(hosts: list[FaultHost]) -> None:
    for h in hosts:
        subprocess.run(["ip", "netns", "del", h.ns], capture_output=True)
        subprocess.run(["ip", "link", "del", h.outer], capture_output=True)
    if hosts:
        subprocess.run(["ip", "link", "del", hosts[0].bridge], capture_output=True)


def plan(n: int, faults: dict[int, str], state: Path, tag: str = "flt", subnet: int = SUBNET) -> list[FaultHost]:
    """N hosts (host i faulty as faults[i] says), their namespaces hb<tag><i> on the bridge hb<tag>-br."""
    return [FaultHost(name=f"{tag}{i + 1}{'-' + faults[i] if i in faults else ''}", ns=f"hb{tag}{i + 1}",
                      ip=f"10.231.{subnet}.{i + 2}", fault=faults.get(i), outer=f"hb{tag}{i + 1}o",
                      inner=f"hb{tag}{i + 1}i", bridge=f"hb{tag}-br", bridge_ip=f"10.231.{subnet}.1",
                      state=state / f"r{i + 1}")
            for i in range(n)]


# A TCP connection from a namespace to the bridge's address, made inside the namespace (nsenter, argv only)
_PROBE = "import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2).close()"
REACH_S = 30.0  # how long every namespace gets to reach the bridge over TCP before the setup fails


def _bridge_facts(bridge: str) -> str:
    """What may stop TCP on a bridge, for the failure's message."""
    facts = []
    for key in ("bridge/bridge-nf-call-iptables", "ipv4/ip_forward"):
        with suppress(OSError):
            facts.append(f"net.{key.replace('/', '.')}={Path(f'/proc/sys/net/{key}').read_text().strip()}")
    link = subprocess.run(["ip", "-br", "link", "show", bridge], capture_output=True, text=True).stdout.strip()
    return "; ".join([*facts, link])


def tcp_reachable(hosts: list[FaultHost], within_s: float = REACH_S) -> None:
    """Every namespace opens a TCP connection to a listener on the bridge's address (what its runner does to the
    API), tried again each second for `within_s`; a RuntimeError naming the hosts that could not, instead of a
    runner that hangs until the test's limit. Ping is not enough: once a namespace answered pings both ways while
    its SYN-ACKs were lost (the bridge had taken a veth's MAC: hostbench_stack.netns.bridge_add)."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind((hosts[0].bridge_ip, 0))
    srv.listen(256)  # connections complete in the backlog; nothing needs to accept them
    port = srv.getsockname()[1]
    pending = list(hosts)
    deadline = time.monotonic() + within_s
    why: dict[str, str] = {}
    try:
        while pending:
            for h in list(pending):
                r = subprocess.run(["nsenter", f"--net=/var/run/netns/{h.ns}", sys.executable, "-c", _PROBE,
                                    h.bridge_ip, str(port)], capture_output=True, text=True, timeout=10)
                if r.returncode == 0:
                    pending.remove(h)
                else:
                    why[h.name] = (r.stderr.strip().splitlines() or ["?"])[-1]
            if not pending or time.monotonic() >= deadline:
                break
            time.sleep(1)
    finally:
        srv.close()
    if pending:
        raise RuntimeError(
            f"{', '.join(h.name for h in pending)} (namespace {', '.join(h.ns for h in pending)}) cannot open a TCP "
            f"connection to the bridge's {hosts[0].bridge_ip} within {within_s:.0f} s: "
            f"{'; '.join(f'{h.name}: {why.get(h.name)}' for h in pending)} ({_bridge_facts(hosts[0].bridge)})")


@contextmanager
def network(hosts: list[FaultHost], within_s: float = REACH_S) -> Iterator[None]:
    """A bridge and one namespace per host on it; every host's link shaped both ways to HOST_LINK_MBIT, a `link`
    host's to LINK_MBIT; every namespace checked to reach the bridge over TCP (`tcp_reachable`) before anything starts
    there."""
    _teardown(hosts)
    prefix = hosts[0].bridge_ip.rsplit(".", 1)[0] + "."
    taken = subprocess.run(["ip", "-o", "-4", "addr", "show"], check=False, capture_output=True, text=True).stdout
    on = [ln.split()[1] for ln in taken.splitlines() if f" {prefix}" in ln]
    if on:  # another interface there would take some hosts' replies
        raise RuntimeError(f"{prefix}0/24 is already on an interface here: {', '.join(on)}")
    try:
        bridge = hosts[0].bridge
        _ip(*bridge_add(bridge))
        _ip("addr", "add", f"{hosts[0].bridge_ip}/24", "dev", bridge)
        _ip("link", "set", bridge, "up")
        for h in hosts:
            inner = h.inner
            _ip("netns", "add", h.ns)
            _ip("link", "add", h.outer, "type", "veth", "peer", "name", inner)
            _ip("link", "set", inner, "netns", h.ns)
            _ip("link", "set", h.outer, "master", bridge)
            _ip("link", "set", h.outer, "up")
            _ip("-n", h.ns, "addr", "add", f"{h.ip}/24", "dev", inner)
            _ip("-n", h.ns, "link", "set", inner, "up")
            _ip("-n", h.ns, "link", "set", "lo", "up")
            for cmd in shape(h):
                subprocess.run(cmd, check=True, capture_output=True)
        tcp_reachable(hosts, within_s)
        yield
    finally:
        _teardown(hosts)


def shape(h: FaultHost) -> list[list[str]]:
    """The tc commands that shape a host's link both ways (its veth's two ends): a token bucket at its rate, whose
    burst holds 10 ms of it (a smaller bucket than the timer's tick holds keeps a fast link below its rate)."""
    mbit = LINK_MBIT if h.fault == "link" else HOST_LINK_MBIT
    tbf = ["tbf", "rate", f"{mbit}mbit", "burst", f"{max(64, mbit * 1000 // 8 // 100)}kb", "latency", "50ms"]
    return [["tc", "qdisc", "add", "dev", h.outer, "root", *tbf],
            ["nsenter", f"--net=/var/run/netns/{h.ns}", "tc", "qdisc", "add", "dev", h.inner, "root", *tbf]]


def start_runners(stack: Any, hosts: list[FaultHost], labels: str) -> None:
    """Each host's runner in its namespace, with its own machine id and state; a `cpu` host under a CPU quota, a
    `disk` host's runner in a throttled cgroup (its kernels with it). Every host may use every CPU: the server
    measures hosts of one machine in turn (app.jobs.turns: their inventories share a boot id), so none measures
    beside another; pinned to a share of the CPUs instead, a host's two-thread items would be oversubscribed."""
    for h in hosts:
        h.state.mkdir(parents=True, exist_ok=True)
        cpu_limit = None
        if h.fault == "cpu":
            # its group weighs what a nice -10 process does (a group weighs one nice-0 process, whatever is in it)
            cpu_limit = CpuLimit(f"flt-{h.name}", CPU_SHARE, weight=NICE_10_WEIGHT).__enter__()
            h.cleanups.append(cpu_limit)
        # ahead of this machine's other work (HOST_NICE): a host's own CPUs are not shared with strangers. nsenter,
        # not `ip netns exec`: that one mounts a sysfs of its own over /sys, which hides /sys/fs/cgroup, where the
        # runner reads its kernels' CPU quota (hostbench_runner.cgroupquota) and the kernels their throttling
        enter = ["nsenter", f"--net=/var/run/netns/{h.ns}"]
        child = stack.start_runner(h.name, state_dir=h.state,
                                   prefix=[*enter, "nice", "-n", str(HOST_NICE)],
                                   extra_env={"HOSTBENCH_RUNNER_NAME": h.name, "HOSTBENCH_MACHINE_ID": f"flt{h.name}",
                                              "HOSTBENCH_RUNNER_LABELS": h.labels or labels},
                                   cpu_limit=cpu_limit)
        if h.fault == "disk":
            disk = DiskLimit(f"flt-{h.name}", block_device(h.state), DISK_BPS).__enter__()
            h.cleanups.append(disk)
            assert child.proc is not None  # started above
            disk.add(child.proc.pid)


def release(hosts: list[FaultHost]) -> None:
    for h in hosts:
        for c in reversed(h.cleanups):
            with suppress(OSError, RuntimeError):
                c.__exit__(None, None, None)
        h.cleanups.clear()


# ---- the measurement -----------------------------------------------------------------------------------------------

def api(stack: Any, method: str, path: str, **kw: Any) -> Any:
    r = httpx.request(method, f"{stack.url}{path}", headers=stack.admin_headers(), timeout=30, **kw)
    if r.status_code >= 400:
        raise RuntimeError(f"{method} {path}: {r.status_code} {r.text[:300]}")
    return r.json()


def wait_suite(stack: Any, suite_run_id: int, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sr = api(stack, "GET", f"/api/suite-runs/{suite_run_id}")
        if sr["status"] != "running":
            return sr
        time.sleep(2)
    raise RuntimeError(f"suite run {suite_run_id} still running after {timeout:.0f} s")


def warm(stack: Any, suite: str, host_ids: list[int], timeout: float, peer: int | None = None) -> None:
    """The suite on each host alone, one after the other: the learned bands' first valid figures (`peer`: the host
    that serves its two-host items)."""
    for h in host_ids:
        sr = api(stack, "POST", "/api/suite-runs",
                 json={"suite": suite, "host_ids": [h], **({"peer_host_id": peer} if peer else {})})
        wait_suite(stack, sr["id"], timeout)


def check(stack: Any, suite: str, label: str, timeout: float, peer: str | None = None,
          names: list[str] | None = None) -> tuple[int, dict]:
    """`./hostbench check --suite S --label L [--peer P] --wait` against the stack (`--hosts` instead of the label
    when `names` are given): (its exit status, its last JSON line)."""
    token = stack.admin_headers()["Authorization"].split(" ", 1)[1]
    root = Path(__file__).resolve().parents[2]
    who = ["--hosts", ",".join(names)] if names else ["--label", label]
    r = subprocess.run([str(root / "hostbench"), "check", "--suite", suite, *who,
                        *(["--peer", peer] if peer else []), "--wait",
                        "--timeout", str(timeout), "--server", stack.url, "--token", token],
                       capture_output=True, text=True, timeout=timeout + 60)
    lines = [x for x in r.stdout.splitlines() if x.startswith("{")]
    if not lines:
        raise RuntimeError(f"check printed no JSON line (exit {r.returncode}): {r.stderr[-1500:]}")
    return r.returncode, json.loads(lines[-1])


def net_params(items: list[dict]) -> dict:
    """A suite's loopback network item's parameters but its ops: what its two-host figures are measured with."""
    net: dict = next((i["params"] for i in items if i["experiment"] == "network"), {})
    return {k: v for k, v in net.items() if k not in ("op", "ops")}


def link_suite(stack: Any, suite: str) -> str:
    """The check's suite with a TCP stream to the peer added (a saved suite): a link is only seen by a figure that
    crosses it, and the built-in levels' network items are loopback."""
    base = api(stack, "GET", f"/api/suites/{suite}")
    keep = net_params(base["items"])
    saved = api(stack, "POST", "/api/suites", json={
        "title": f"{base['title']} + TCP to a peer",
        "description": f"{base['id']}'s items, and one TCP stream from each host to the peer (a link's figure)",
        "items": [*({"experiment": i["experiment"], "params": i["params"], "needs": i.get("needs")}
                    for i in base["items"]),
                  {"experiment": "network_pair", "params": {**keep, "op": "tcp_stream"}}]})
    return str(saved["id"])


def mesh(stack: Any, names: list[str], params: dict, timeout: float, mode: str = "all_pairs_both_ways") -> dict:
    """All pairs TCP throughput among the hosts (each ordered pair once by default; the mesh scheduler's rounds; one
    op, so that 8 hosts both ways, 56 pair jobs of 2 runs each, stay within a person's 200 active runs), through
    `./hostbench mesh --wait` to its end: the mesh, its matrix as that command prints it, and what the same runs take
    one after another (each cell's runs' own seconds, added up: n(n-1) pair jobs in a row, less the gaps between
    them)."""
    token = stack.admin_headers()["Authorization"].split(" ", 1)[1]
    root = Path(__file__).resolve().parents[2]
    r = subprocess.run([str(root / "hostbench"), "mesh", "--hosts", ",".join(names), "--mode", mode,
                        "--ops", "tcp_stream", "--params", json.dumps(params), "--wait", "--timeout", str(timeout),
                        "--server", stack.url, "--token", token],
                       capture_output=True, text=True, timeout=timeout + 60)
    lines = [x for x in r.stdout.splitlines() if x.startswith("{")]
    if not lines:
        raise RuntimeError(f"mesh printed no JSON line (exit {r.returncode}): {r.stderr[-1500:]}")
    m = api(stack, "GET", f"/api/meshes/{json.loads(lines[-1])['id']}")
    seconds = 0.0
    for c in m["cells"]:
        for rid in (c.get("stream_run_id"), c.get("rr_run_id")):
            if rid:
                run = api(stack, "GET", f"/api/runs/{rid}")
                if run.get("started_at") and run.get("finished_at"):
                    seconds += (_when(run["finished_at"]) - _when(run["started_at"]))
    text = "\n".join(x for x in r.stderr.splitlines() if not x.startswith(f"mesh {m['id']}:"))
    return {"mesh": m, "text": text, "sequential_s": round(seconds)}


def _when(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def expected_figures(fault: str | None) -> set[str]:
    """Which experiments a fault may fail: cpu -> the CPU-bound ones (the run table's cpu_bound: cpu, memory, the
    CPU trace), disk -> disk, link -> network_drive. A FAIL on any other figure is a wrong verdict.

    A CPU quota is the capacity of every kernel whose CPU share is judged against it (docs/methodology/verdicts.md,
    "A host's CPU quota is its capacity"): one thread at half a CPU copies, adds and chases pointers half the wall
    time, so its memory figures fall with its CPU figures, and that is what the host delivers. A disk or network
    phase the quota throttled measured the quota, not the device or the link: the kernels report it
    (`throttled_share`) and the server does not judge such a row (`cpu_bound`); one that still FAILs (the 8-host
    run's checks 2-4 before that: 4 KiB writes at 1.3 MB/s) is wrong here."""
    measured = {kind for e in EXPERIMENTS.values() for role, kind in e.roles if role != "serve"}  # a host's figures
    cpu_bound = {kind for kind, run in RUNS.items() if run.cpu_bound is True and kind in measured}
    return {"cpu": cpu_bound, "disk": {"disk"}, "link": {"network_drive"}}.get(fault or "", set())


def score(hosts: list[FaultHost], line: dict, check_json: dict) -> list[dict]:
    """Each host: its verdict, what failed, and whether that is right (a bad host FAIL on its fault's figure and
    only there; an undisturbed one never FAIL)."""
    by_name = {h["host_name"]: h for h in check_json["hosts"]}
    out = []
    for h in hosts:
        v = by_name[h.name]
        failed = sorted({f["figure"]["experiment"] + ":" + str(f["figure"]["op"]) for f in v["figures"]
                         if f["status"] == "fail"})
        kinds = {x.split(":")[0] for x in failed}
        if h.fault is None:
            right: bool | None = v["verdict"] != "FAIL"
        elif v["verdict"] == "FAIL":
            right = kinds <= expected_figures(h.fault) and bool(kinds)
        elif v["verdict"] == "PASS":
            right = False  # its fault went unseen
        else:
            right = None  # not judged this time (disturbed or no baseline): neither right nor wrong
        why = next((f["reason"] for f in v["figures"] if f["status"] in ("fail", "disturbed")), v["reason"])
        out.append({"host": h.name, "fault": h.fault, "verdict": v["verdict"], "failed": failed, "right": right,
                    "why": str(why)[:200]})
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hosts", type=int, default=8, help="runners, each in its own namespace (default 8)")
    p.add_argument("--faults", default="cpu,disk,link", help="comma-separated faults, one host each: cpu, disk, link")
    p.add_argument("--suite", default="quick", help="the check's suite (default quick; with a `link` fault, a TCP "
                   "stream from each host to a peer, one more runner, is added to it)")
    p.add_argument("--repeat", type=int, default=1, help="checks, one after the other")
    p.add_argument("--faulty-checks", type=int, default=None, metavar="K",
                   help="the faulty hosts are in the first K checks only (default: every check); the later ones "
                   "check the undisturbed hosts alone: hosts of one machine are measured in turn, so each host "
                   "adds its suite's time to every check, and the repeats are what the false FAILs are counted on")
    p.add_argument("--mesh", action=argparse.BooleanOptionalAction, default=True,
                   help="all pairs TCP among the hosts first: its wall time against the same runs one after another")
    p.add_argument("--mesh-mode", choices=["all_pairs_both_ways", "all_pairs"], default="all_pairs_both_ways",
                   help="each ordered pair once (n(n-1) links, the default) or each unordered pair once")
    p.add_argument("--warm", action=argparse.BooleanOptionalAction, default=False,
                   help="the suite on each undisturbed host alone first, for learned bands from runs apart (not "
                   "needed: the server measures hosts of one machine in turn, so a check's own runs on the undisturbed "
                   "hosts are the bands' siblings)")
    p.add_argument("--timeout", type=float, default=3600, help="seconds for each suite run, check or mesh (a check "
                   "measures the hosts one after another)")


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def table(hosts: list[FaultHost], rounds: list[dict]) -> str:
    """A row per host: its fault, its verdicts over the checks, the wrong ones, what failed."""
    head = ["host", "fault", "checks", "FAIL", "PASS", "DISTURBED", "NO_BASELINE", "wrong", "failed figures"]
    rows = [head]
    for h in hosts:
        seen = [x for r in rounds for x in r["hosts"] if x["host"] == h.name]
        count = {v: sum(1 for x in seen if x["verdict"] == v) for v in head[3:7]}
        failed = sorted({f for x in seen for f in x["failed"]})
        rows.append([h.name, h.fault or "-", str(len(seen)), *map(str, count.values()),
                     str(sum(1 for x in seen if x["right"] is False)), ", ".join(failed) or "-"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head) - 1)]
    return "\n".join("  ".join([*(v.ljust(w) for v, w in zip(r[:-1], widths, strict=True)), r[-1]]) for r in rows)


def run(args: argparse.Namespace) -> int:
    why = why_not()
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    faults = [f.strip() for f in args.faults.split(",") if f.strip()]
    if any(f not in FAULTS for f in faults) or len(faults) >= args.hosts:
        print(f"error: --faults takes some of {', '.join(FAULTS)}, fewer than --hosts", file=sys.stderr)
        return 2

    state = Path(tempfile.mkdtemp(prefix="hb-faults-"))
    with_peer = "link" in faults
    fleet = plan(args.hosts + with_peer, {len(faults) - 1 - i: f for i, f in enumerate(reversed(faults))}, state)
    hosts = fleet[:args.hosts]
    peer = None
    if with_peer:  # serves each host's TCP stream; not checked itself (it is not labelled as the fleet)
        peer = fleet[-1]
        peer.name, peer.labels = "flt-peer", "role=faults-peer"
    label = "instance_type=faults"
    rounds: list[dict] = []
    meshed: dict | None = None
    stopped = False
    signal.signal(signal.SIGTERM, _stop)
    with network(fleet):
        stack = Stack(state / "stack", with_runner=False, bind=BRIDGE_IP)
        try:
            stack.start()
            start_runners(stack, fleet, label)
            stack.wait_healthy(runners=len(fleet))
            ids = {h["name"]: h["id"] for h in api(stack, "GET", "/api/hosts")["data"]}
            suite = link_suite(stack, args.suite) if peer else args.suite
            if args.mesh:
                items = api(stack, "GET", f"/api/suites/{args.suite}")["items"]
                try:
                    meshed = mesh(stack, [h.name for h in hosts], net_params(items), args.timeout,
                                  args.mesh_mode)
                except RuntimeError as exc:  # the checks still run; the JSON line says "mesh": null
                    print(f"the mesh failed: {exc}", file=sys.stderr)
            if meshed:
                m = meshed["mesh"]
                print(f"all pairs among {len(hosts)}: {len(m['cells'])} links in {m['rounds']} rounds, "
                      f"{m['wall_s']:.0f} s; the same runs one after another: {meshed['sequential_s']} s\n"
                      f"{meshed['text']}", file=sys.stderr, flush=True)
            if args.warm:
                t0 = time.monotonic()
                warm(stack, suite, [ids[h.name] for h in hosts if h.fault is None], args.timeout,
                     ids[peer.name] if peer else None)
                print(f"warmed the learned bands in {time.monotonic() - t0:.0f} s (suite {suite})", file=sys.stderr)
            for i in range(args.repeat):
                t0 = time.monotonic()
                alone = args.faulty_checks is not None and i >= args.faulty_checks
                checked = [h for h in hosts if not (alone and h.fault)]
                status, line = check(stack, suite, label, args.timeout, peer.name if peer else None,
                                     [h.name for h in checked] if alone else None)
                full = api(stack, "GET", f"/api/checks/{line['check']}")
                rows = score(checked, line, full)
                rounds.append({"check": line["check"], "exit": status, "seconds": round(time.monotonic() - t0),
                               "hosts": rows})
                turn = next((h["in_turn"] for h in full["hosts"] if h.get("in_turn")), None)
                print(f"check {i + 1}/{args.repeat} (id {line['check']}, {time.monotonic() - t0:.0f} s, exit "
                      f"{status}){'; hosts ' + turn.split(';')[0] if turn else ''}:", file=sys.stderr)
                for r in rows:
                    print(f"  {r['host']:<14} {str(r['fault'] or '-'):<5} {r['verdict']:<11} "
                          f"{'right' if r['right'] else 'WRONG' if r['right'] is False else 'not judged'}  "
                          f"{', '.join(r['failed'])}  {r['why'] if r['verdict'] != 'PASS' else ''}",
                          file=sys.stderr, flush=True)
        except KeyboardInterrupt:
            stopped = True
            print(f"stopped after {len(rounds)} checks", file=sys.stderr)
        finally:
            release(fleet)
            stack.stop()
    wrong = sum(1 for r in rounds for h in r["hosts"] if h["right"] is False)
    false_fail = sum(1 for r in rounds for h in r["hosts"] if h["fault"] is None and h["verdict"] == "FAIL")
    caught = sum(1 for r in rounds for h in r["hosts"] if h["fault"] and h["right"] is True)
    judged = sum(1 for r in rounds for h in r["hosts"] if h["fault"] and h["right"] is not None)
    if meshed:
        print(meshed["text"])
    print(table(hosts, rounds))
    m = meshed["mesh"] if meshed else None
    print(json.dumps({"hosts": args.hosts, "faults": faults, "suite": args.suite, "checks": len(rounds),
                      "repeat": args.repeat, "faulty_checks": args.faulty_checks, "stopped": stopped,
                      "wrong": wrong, "false_fail": false_fail,
                      "faults_caught": caught, "faults_judged": judged,
                      "mesh": m and {"id": m["id"], "links": len(m["cells"]), "rounds": m["rounds"],
                                     "wall_s": m["wall_s"], "sequential_s": meshed["sequential_s"] if meshed else None,
                                     "runs": m["runs"], "slowest_link": m["slowest_link"],
                                     "slowest_host": m["slowest_host"]},
                      "rounds": rounds}))
    return 1 if wrong or stopped else 0
