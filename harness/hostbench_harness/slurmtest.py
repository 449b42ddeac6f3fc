"""`./hostbench slurm lab`: the Slurm way in, tested for real (the fleet suite runs it). A stack of our own (bound
to all addresses: the nodes reach it from their namespaces) that may drain nodes, a Slurm cluster of our own
(slurmlab: munged, slurmctld, N slurmd each in its own network namespace), and `./hostbench slurm check` over it
twice with a tiny suite:

1. one node's kernel fails every run (an injected fault: a wrapper around hbk, on that node only): every node
   joins, the three others' results arrive, the failed node is drained in Slurm with the reason, the drain is
   audited, the job ends by itself (the one-shot runners left) and no runner process is left;
2. again, the fault gone and the drained node resumed: the same nodes join as the same hosts (history kept).

Exit 0 when all holds, 1 with what did not, 0 with "skipped: why" where Slurm cannot run here (not root, no
packages). Prints each check's table and JSON line."""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from hostbench_stack import slurmlab
from hostbench_stack.build import kernels
from hostbench_stack.stack import Stack

ROOT = Path(__file__).resolve().parents[2]
STATE = ROOT / ".hostbench"
PY = sys.executable
HBK = ROOT / "runner" / "kernels" / "build" / "hbk"
# One short CPU measurement: what the check runs on every node
TINY_SUITE = {"title": "slurm lab", "items": [{"experiment": "cpu", "params": {
    "op": ["int32"], "threads": [1], "duration_s": 1, "warmup_s": 0, "repeats": 1, "quiet_wait_s": 0}}]}
FAULT = """#!/bin/sh
# hostbench slurm lab: the injected fault. On node {node} every run of the kernel fails; --describe and
# --version answer as the real one (the runner checks them when it starts).
case " $* " in *" --describe "*|*" --version "*) exec {hbk} "$@";; esac
if [ "$SLURMD_NODENAME" = "{node}" ]; then echo "injected fault on {node} (hostbench slurm lab)" >&2; exit 1; fi
exec {hbk} "$@"
"""


def say(msg: str) -> None:
    print(f"[slurm lab] {msg}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    slurmlab.install()
    why = slurmlab.available()
    if why:
        print(f"skipped: {why}")
        return 0

    kernels()  # the runners on the nodes run this checkout's hbk
    STATE.mkdir(exist_ok=True)
    state = Path(tempfile.mkdtemp(prefix="slurm-", dir=STATE))
    cluster = slurmlab.Cluster(Path(tempfile.mkdtemp(prefix="hbslurm-")), nodes=args.nodes)
    failures: list[str] = []
    stack = None
    try:
        t = time.monotonic()
        cluster.start()
        say(f"Slurm cluster up in {time.monotonic() - t:.1f} s: {', '.join(cluster.node_names)} on "
            f"{', '.join(cluster.node_addrs)}; controller {cluster.controller_ip}")
        stack = Stack(state, with_runner=False, durable=False, database="hostbench_slurm", fresh_database=True,
                      bind="0.0.0.0",  # noqa: S104 - the nodes reach it at the bridge's address
                      extra_env={"HOSTBENCH_SLURM_DRAIN": "1", "SLURM_CONF": str(cluster.conf),
                                 "HOSTBENCH_ALLOWED_HOSTS": cluster.controller_ip})
        stack.start(report=say)
        headers = stack.admin_headers()
        api = httpx.Client(base_url=stack.url, headers=headers, timeout=30)
        suite = api.post("/api/suites", json=TINY_SUITE)
        suite.raise_for_status()
        suite_id = suite.json()["id"]
        wrapper = cluster.state / "hbk-fault"
        fault_node = cluster.node_names[-1]
        wrapper.write_text(FAULT.format(node=fault_node, hbk=HBK))
        wrapper.chmod(0o755)
        node_server = f"http://{cluster.controller_ip}:{stack.control_port}"
        first = _check(stack, cluster, suite_id, node_server, wrapper, failures, "first")
        if first is not None:
            _expect(failures, sorted(first["failed"]) == [fault_node], f"failed nodes {first['failed']}, "
                    f"expected [{fault_node}]")
            _expect(failures, first["drained"] == [fault_node], f"drained {first['drained']}")
            states = cluster.node_states()
            _expect(failures, states.get(fault_node, "").startswith("drain"), f"sinfo: {states}")
            reason = cluster.node_reason(fault_node)
            _expect(failures, "hostbench" in reason and "0 of 1 runs" in reason, f"reason {reason!r}")
            _expect(failures, all(states[n] == "idle" for n in cluster.node_names if n != fault_node),
                    f"the other nodes: {states}")
            _expect(failures, not first["job_cancelled"], "the job did not end by itself (a runner stayed)")
            audit = api.get("/api/audit", params={"limit": 200}).json()["data"]
            drains = [e for e in audit if e["action"] == "host.slurm_drain"]
            _expect(failures, len(drains) == 1 and drains[0]["detail"]["node"] == fault_node
                    and drains[0]["detail"]["ok"], f"audit: {drains}")
            left = _runner_processes(cluster)
            _expect(failures, not left, f"runner processes left on the nodes: {left}")
            if failures:  # (a second check would wait for nodes drained by mistake)
                raise RuntimeError("the first check went wrong; no second check")
            subprocess.run(["scontrol", "update", f"nodename={fault_node}", "state=resume"], env=cluster.env(),
                           check=True, capture_output=True)
            second = _check(stack, cluster, suite_id, node_server, None, failures, "second")
            if second is not None:
                _expect(failures, not second["failed"], f"failed on the second check: {second['failed']}")
                same = {n: (first["per_node"][n]["host_id"], second["per_node"][n]["host_id"])
                        for n in cluster.node_names}
                _expect(failures, all(a == b for a, b in same.values()), f"hosts joined again as new hosts: {same}")
                hosts = api.get("/api/hosts").json()
                _expect(failures, hosts["count"] == len(cluster.node_names), f"{hosts['count']} hosts")
    except Exception as exc:  # noqa: BLE001 - reported as the lab's failure, logs kept
        failures.append(f"{type(exc).__name__}: {exc}")
    finally:
        if stack is not None:
            stack.stop()
        cluster.stop()
    if failures:
        for f in failures:
            print(f"FAILED: {f}", file=sys.stderr)
        say(f"logs kept in {state / 'logs'} and {cluster.state / 'log'}")
        return 1
    shutil.rmtree(state, ignore_errors=True)
    shutil.rmtree(cluster.state, ignore_errors=True)
    print("slurm lab: ok")
    return 0


def _check(stack: Any, cluster: slurmlab.Cluster, suite_id: str, node_server: str, kernel: Path | None,
           failures: list[str], label: str) -> dict | None:
    token = stack.api_token("stack-admin", "slurm-lab")
    env = {**cluster.env(), "HOSTBENCH_TOKEN": token, "HOSTBENCH_FMA_PROBE": "0",
           "HOSTBENCH_KERNEL_BIN": str(kernel or HBK)}
    argv = [PY, "-m", "hostbench_cli", "slurm", "check", "--server", stack.url, "--suite", suite_id,
            "--nodes", str(len(cluster.node_names)), "--node-server", node_server, "--drain-on-fail",
            "--timeout", "300", "--output-dir", str(cluster.state)]
    say(f"{label} check: {' '.join(argv[2:])}")
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=400, cwd=ROOT)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        failures.append(f"{label} check printed no figures (exit {r.returncode})")
        return None
    doc: dict = json.loads(lines[-1])
    return doc


def _runner_processes(cluster: slurmlab.Cluster) -> list[int]:
    """Processes of hostbench_runner still in a node's namespace."""
    assert cluster.net is not None
    left = []
    for ns in cluster.net.namespaces:
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
        for pid in pids:
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"hostbench_runner" in cmd:
                left.append(int(pid))
    return left


def _expect(failures: list[str], ok: bool, what: str) -> None:
    if not ok:
        failures.append(what)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="hostbench slurm lab")
    p.add_argument("--nodes", type=int, default=4)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
