"""`./hostbench slurm check`: a suite (a health check) on Slurm nodes through Slurm, with no daemon left on them.

1. an enrolment token with one use per node, expiring in an hour, is made on the server (admins' API token);
2. one batch job (`sbatch --nodes N --ntasks-per-node 1`, or `--nodelist`) whose script starts one job step per
   node (`srun`), each a one-shot runner (`hostbench-runner --once`): it joins with the token under its Slurm node
   name (SLURMD_NODENAME: its name and its label slurm_node; the same node joins again as the same host next time),
   runs what the server hands it, uploads and exits;
3. once every node has joined, the suite starts on their hosts (16 hosts a suite run, the API's bound) and is
   followed to its end; each node's result is timed from the submission;
4. the token is revoked; the job ends as its runners leave (cancelled with scancel if one is still there);
5. with --drain-on-fail, each node whose runs did not all succeed is drained through the server
   (POST /api/hosts/{id}/slurm-drain, opt-in there, audited).

Printed: a table, one row per node, and one JSON line with the figures. `./hostbench slurm drain HOST --reason R`
drains one host's node. The token travels to the nodes in the job's environment (sbatch exports it), never in an
argv; Slurm's administrators can read a job's environment, so it is one use per node and expires in an hour."""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from hostbench_common.runstatus import TERMINAL
from hostbench_harness import slurmtest

from hostbench_cli.remote import RemoteError, Server, add_server_arguments, resolve_host

ROOT = Path(__file__).resolve().parents[2]
SUITE_HOSTS_MAX = 16  # SuiteRunCreate.host_ids' bound (backend/app/suites/schemas.py)
TOKEN_TTL_S = 3600


def add_arguments(sub: Any) -> None:
    sl = sub.add_parser("slurm", help="run a suite on Slurm nodes through Slurm (one-shot runners), drain a node")
    ss = sl.add_subparsers(dest="slurm_cmd", required=True)
    ck = ss.add_parser("check", help="one batch job, one-shot runner per node; the suite on them; a table")
    add_server_arguments(ck)
    ck.add_argument("--suite", required=True, help="a suite id (built-in like quick, or a saved one)")
    ck.add_argument("--nodes", type=int, default=None, help="how many nodes (sbatch --nodes)")
    ck.add_argument("--nodelist", default=None, help="which nodes (sbatch --nodelist, e.g. node[01-16])")
    ck.add_argument("--partition", default=None, help="sbatch --partition")
    ck.add_argument("--node-server", default=None, metavar="URL",
                    help="the server's URL as the nodes reach it (default: --server)")
    ck.add_argument("--runner", default=None,
                    help="the runner command on the nodes (default: this checkout's, for a shared filesystem: "
                    f"{sys.executable} -m hostbench_runner)")
    ck.add_argument("--drain-on-fail", action="store_true",
                    help="drain (through the server) each node whose runs did not all succeed")
    ck.add_argument("--timeout", type=float, default=1800.0, help="give up after this many seconds")
    ck.add_argument("--output-dir", default=None, help="where the job's output files go (default: a temp dir)")
    lb = ss.add_parser("lab", help="the test: a Slurm cluster in network namespaces, a stack, two checks "
                       "(hostbench_harness/slurmtest.py)")
    lb.add_argument("--nodes", type=int, default=4)
    dr = ss.add_parser("drain", help="drain a host's Slurm node with a reason (the server must allow it)")
    add_server_arguments(dr)
    dr.add_argument("host", help="the host, by name or id")
    dr.add_argument("--reason", required=True)


@dataclass
class NodeResult:
    node: str
    host_id: int | None = None
    joined_s: float | None = None
    result_s: float | None = None
    runs: int = 0
    succeeded: int = 0
    drained: bool = False
    statuses: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.host_id is not None and self.runs > 0 and self.succeeded == self.runs


def slurm(argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False, **kw)
    if r.returncode != 0:
        raise RemoteError(f"{' '.join(argv[:2])}: exit {r.returncode}: {(r.stderr or r.stdout).strip()[:300]}")
    return r


def hostnames(nodelist: str) -> list[str]:
    return slurm(["scontrol", "show", "hostnames", nodelist]).stdout.split()


def check(server: Server, args: argparse.Namespace, out: IO[str]) -> int:
    if bool(args.nodes) == bool(args.nodelist):
        raise RemoteError("give --nodes N or --nodelist LIST (one of them)")
    wanted = hostnames(args.nodelist) if args.nodelist else []
    n = len(wanted) if wanted else int(args.nodes)
    if not 1 <= n <= 10000:
        raise RemoteError(f"{n} nodes: give 1..10000")
    t_token = time.monotonic()
    tok = server.request("POST", "/api/hosts/registration-tokens", "making the enrolment token",
                         json={"uses": n, "ttl_s": TOKEN_TTL_S, "name": f"slurm {args.suite} {time.strftime('%F %T')}",
                               "labels": {"enrolled_by": "slurm"}}).json()
    token_id = tok["info"]["id"]
    outdir = Path(args.output_dir) if args.output_dir else Path(tempfile.gettempdir())
    runner = shlex.split(args.runner) if args.runner else [sys.executable, "-m", "hostbench_runner"]
    step = shlex.join(["srun", "--ntasks-per-node=1", "--kill-on-bad-exit=0", *runner, "--once"])
    sbatch = ["sbatch", "--parsable", "--job-name=hostbench", f"--nodes={n}", "--ntasks-per-node=1",
              f"--output={outdir / 'hostbench-slurm-%j.out'}", f"--time={max(1, int(args.timeout // 60) + 1)}",
              *([f"--nodelist={args.nodelist}"] if args.nodelist else []),
              *([f"--partition={args.partition}"] if args.partition else []), "--wrap", step]
    env = dict(os.environ, HOSTBENCH_SERVER=(args.node_server or server.url).rstrip("/"),
               HOSTBENCH_REGISTRATION_TOKEN=tok["token"], HOSTBENCH_ONCE="1", HOSTBENCH_ONCE_IDLE="5",
               HOSTBENCH_ONCE_WAIT=str(int(args.timeout)))
    env.pop("HOSTBENCH_RUNNER_NAME", None)
    env.pop("HOSTBENCH_RUNNER_STATE", None)
    t0 = time.monotonic()
    job = slurm(sbatch, env=env).stdout.strip().split(";")[0]
    print(f"slurm job {job}: {n} one-shot runner(s), enrolment token {token_id} ({n} uses)", file=sys.stderr)
    deadline = t0 + args.timeout
    results: dict[str, NodeResult] = {}
    try:
        nodes = _job_nodes(job, deadline)
        results = {node: NodeResult(node) for node in nodes}
        _wait_joined(server, results, t0, deadline)
        t_joined = time.monotonic() - t0
        print(f"all {n} node(s) joined in {t_joined:.1f} s; starting suite {args.suite}", file=sys.stderr)
        suite_runs = []
        ids = [r.host_id for r in results.values() if r.host_id is not None]
        for i in range(0, len(ids), SUITE_HOSTS_MAX):
            body = {"suite": args.suite, "host_ids": ids[i:i + SUITE_HOSTS_MAX]}
            suite_runs.append(server.request("POST", "/api/suite-runs", f"suite {args.suite!r}", json=body).json())
        _follow(server, [sr["id"] for sr in suite_runs], results, t0, deadline)
    finally:
        server.request("DELETE", f"/api/hosts/registration-tokens/{token_id}", "revoking the enrolment token")
    t_results = max((r.result_s or 0.0) for r in results.values()) if results else None
    left = _wait_job_end(job, min(deadline, time.monotonic() + 60))
    if left:
        subprocess.run(["scancel", job], capture_output=True, check=False, timeout=60)
    t_end = time.monotonic() - t0
    if args.drain_on_fail:
        for r in results.values():
            if not r.ok and r.host_id is not None:
                reason = f"hostbench {args.suite}: {r.succeeded} of {r.runs} runs succeeded (job {job})"
                server.request("POST", f"/api/hosts/{r.host_id}/slurm-drain", f"draining {r.node}",
                               json={"reason": reason})
                r.drained = True
    out.write(table(results) + "\n")
    figures = {"job": job, "suite": args.suite, "nodes": n, "token_s": round(t0 - t_token, 2),
               "all_joined_s": round(t_joined, 2), "all_results_s": round(t_results, 2) if t_results else None,
               "job_end_s": round(t_end, 2), "job_cancelled": bool(left),
               "loadavg": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(),
               "failed": sorted(r.node for r in results.values() if not r.ok),
               "drained": sorted(r.node for r in results.values() if r.drained),
               "per_node": {r.node: {"host_id": r.host_id, "joined_s": r.joined_s, "result_s": r.result_s,
                                     "runs": r.runs, "succeeded": r.succeeded} for r in results.values()}}
    out.write(json.dumps(figures, sort_keys=True) + "\n")
    out.flush()
    return 0 if all(r.ok for r in results.values()) else 1


def _job_nodes(job: str, deadline: float) -> list[str]:
    """The job's nodes once Slurm has allocated them."""
    while time.monotonic() < deadline:
        r = slurm(["squeue", "-h", "-j", job, "-o", "%T %N"])
        state, _, nodelist = r.stdout.strip().partition(" ")
        if state == "RUNNING" and nodelist.strip():
            return hostnames(nodelist.strip())
        if not r.stdout.strip():
            raise RemoteError(f"slurm job {job} ended before it ran (see its output file)")
        time.sleep(0.5)
    raise RemoteError(f"slurm job {job} was not allocated in time")


def _wait_joined(server: Server, results: dict[str, NodeResult], t0: float, deadline: float) -> None:
    """Each node's host: the host named as the node whose label slurm_node is that node, seen since the job."""
    since = time.time() - (time.monotonic() - t0) - 5
    while True:
        hosts = server.get_json("/api/hosts", "listing hosts", limit=1000)["data"]
        for h in hosts:
            r = results.get(h["name"])
            seen = _epoch(h.get("last_seen_at"))
            if (r is not None and r.host_id is None and h.get("labels", {}).get("slurm_node") == r.node
                    and h.get("online") and seen is not None and seen >= since):
                r.host_id, r.joined_s = h["id"], round(time.monotonic() - t0, 2)
        missing = [r.node for r in results.values() if r.host_id is None]
        if not missing:
            return
        if time.monotonic() > deadline:
            raise RemoteError(f"node(s) {', '.join(missing)} did not join in time")
        time.sleep(0.5)


def _follow(server: Server, suite_run_ids: list[int], results: dict[str, NodeResult], t0: float,
            deadline: float) -> None:
    """Poll the suite runs each second; a node's result time is when all its runs were first seen ended."""
    by_host = {r.host_id: r for r in results.values()}
    ended = set(TERMINAL)  # members equal their values
    while True:
        runs = [run for sid in suite_run_ids
                for run in server.get_json(f"/api/suite-runs/{sid}", f"suite run {sid}")["runs"]]
        for r in results.values():
            mine = [run for run in runs if by_host.get(run["host_id"]) is r]
            r.runs, r.succeeded = len(mine), sum(run["status"] == "succeeded" for run in mine)
            r.statuses = [run["status"] for run in mine]
            if r.result_s is None and mine and all(run["status"] in ended for run in mine):
                r.result_s = round(time.monotonic() - t0, 2)
        if all(r.result_s is not None for r in results.values()):
            return
        if time.monotonic() > deadline:
            raise RemoteError("the suite had not ended on every node in time")
        time.sleep(1.0)


def _wait_job_end(job: str, deadline: float) -> bool:
    """True when the job is still there at the deadline."""
    while time.monotonic() < deadline:
        if not slurm(["squeue", "-h", "-j", job, "-o", "%T"]).stdout.strip():
            return False
        time.sleep(0.5)
    return True


def _epoch(s: str | None) -> float | None:
    try:
        return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() if s else None
    except ValueError:
        return None


def table(results: dict[str, NodeResult]) -> str:
    rows = [("node", "host", "joined s", "result s", "runs ok", "verdict", "drained")]
    for r in sorted(results.values(), key=lambda r: r.node):
        rows.append((r.node, str(r.host_id or "-"), f"{r.joined_s:.1f}" if r.joined_s is not None else "-",
                     f"{r.result_s:.1f}" if r.result_s is not None else "-", f"{r.succeeded}/{r.runs}",
                     "ok" if r.ok else "FAILED", "yes" if r.drained else "no"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def drain(server: Server, args: argparse.Namespace, out: IO[str]) -> int:
    host_id, name = resolve_host(server, args.host)
    r = server.request("POST", f"/api/hosts/{host_id}/slurm-drain", f"draining {name}",
                       json={"reason": args.reason}).json()
    print(f"host {name}: Slurm node {r['node']} drained ({r['reason']})", file=out)
    return 0


def main(args: argparse.Namespace) -> int:
    if args.slurm_cmd == "lab":
        return slurmtest.run(args)
    server: Server | None = None
    try:
        server = Server.from_args(args)
        if args.slurm_cmd == "check":
            return check(server, args, sys.stdout)
        return drain(server, args, sys.stdout)
    except (RemoteError, subprocess.TimeoutExpired, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if server is not None:
            server.close()
