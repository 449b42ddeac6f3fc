"""`./hostbench enrol-load`: N runners join with ONE enrolment token of count N, all at the same instant, on a
stack of our own; then one more, which must be refused. Measured: the time until every host is online (joined and
heartbeating, as GET /api/hosts shows it), the server's CPU over the joins (API processes, PostgreSQL, the Celery
worker and beat), duplicates (hosts, names and machine ids: 0), the N+1st's answer. Printed as a table and one
JSON line.

The runners are the load harness's protocol clients (hostbench_harness.load.base: the runner's own requests, its
register body with a machine id of its own, then a heartbeat), spread over --procs OS processes that start their
joins at one shared instant; a real runner process costs its host ~1 s of CPU to start (inventory, each kernel's
--describe), which 200 on this machine would measure instead of the server."""
from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from hostbench_stack.stack import Stack

from hostbench_harness.load.base import VERSION, Client, HttpFailure, retry_after
from hostbench_harness.load.procs import Meter, _procs
from hostbench_harness.load.sim import INVENTORY

ROOT = Path(__file__).resolve().parents[2]
STATE = ROOT / ".hostbench"
JOIN_RETRIES = 60


def say(msg: str) -> None:
    print(f"[enrol-load] {msg}", file=sys.stderr, flush=True)


async def _join(client: Client, token: str, name: str, machine_id: str) -> dict[str, Any]:
    """One runner's join as hostbench_runner makes it (429/503: wait Retry-After and again), then a heartbeat."""
    body = {"registration_token": token, "name": name, "hostname": f"{name}.enrol", "version": VERSION,
            "inventory": INVENTORY, "labels": {}, "machine_id": machine_id}
    t0 = time.monotonic()
    retries = 0
    for _ in range(JOIN_RETRIES):
        try:
            st, hdrs, content = await client.request("POST", "/api/runners/register", body=body, timeout=60)
        except HttpFailure as exc:
            st, hdrs, content = 0, {}, str(exc).encode()
        if st in (0, 429, 503):
            retries += 1
            await asyncio.sleep(retry_after(hdrs, 0.5))
            continue
        break
    out: dict[str, Any] = {"name": name, "status": st, "retries": retries, "join_s": time.monotonic() - t0}
    if st == 201:
        doc = json.loads(content)
        out["host_id"] = doc["host_id"]
        hb, _, _ = await client.request("POST", "/api/runner/heartbeat", token=doc["runner_token"],
                                        body={"run": None, "version": VERSION}, timeout=60)
        out["heartbeat"] = hb
    else:
        out["detail"] = content[:300].decode(errors="replace")
    return out


def _worker(host: str, port: int, token: str, names: list[str], go_at: float, q: mp.Queue[Any]) -> None:
    async def main() -> list[dict[str, Any]]:
        clients = [Client(host, port) for _ in names]
        await asyncio.sleep(max(0.0, go_at - time.time()))
        joins = (_join(c, token, n, uuid.uuid4().hex) for c, n in zip(clients, names, strict=True))
        return await asyncio.gather(*joins)

    q.put(asyncio.run(main()))


def run(args: argparse.Namespace) -> int:
    STATE.mkdir(exist_ok=True)
    state = Path(tempfile.mkdtemp(prefix="enrol-", dir=STATE))
    stack = Stack(state, with_runner=False, durable=False, database="hostbench_enrol", fresh_database=True)
    load_before = [round(x, 2) for x in os.getloadavg()]
    say(f"starting the stack in {state} (machine load {load_before})")
    ok = False
    try:
        stack.start(report=say)
        api = httpx.Client(base_url=stack.url, headers=stack.admin_headers(), timeout=60)
        r = api.post("/api/hosts/registration-tokens", json={"uses": args.runners, "ttl_s": 3600, "name": "enrol load"})
        r.raise_for_status()
        token, token_id = r.json()["token"], r.json()["info"]["id"]
        def server_procs() -> list[Any]:  # the API (both kinds), PostgreSQL, the Celery worker and beat
            pids = [c.proc.pid for n, c in stack.children.items() if n in ("api", "worker", "beat") and c.proc]
            if stack.pg and stack.pg.proc:
                pids.append(stack.pg.proc.pid)
            return [p for pid in pids for p in _procs(pid)]

        server = Meter(server_procs)
        host, port = "127.0.0.1", stack.control_port
        names = [f"enrol-{i:04d}" for i in range(args.runners)]
        procs = max(1, min(args.procs, args.runners))
        chunks = [names[i::procs] for i in range(procs)]
        q: mp.Queue[Any] = mp.Queue()
        go_at = time.time() + 2.0 + 0.2 * procs  # every process started and connected before it
        workers = [mp.Process(target=_worker, args=(host, port, token, c, go_at, q)) for c in chunks]
        for w in workers:
            w.start()
        time.sleep(max(0.0, go_at - time.time()))
        server.mark()
        t0 = time.monotonic()
        online_s = None
        while time.monotonic() - t0 < args.timeout:
            hosts = api.get("/api/hosts", params={"limit": 1000}).json()
            if hosts["count"] >= args.runners and sum(h["online"] for h in hosts["data"]) >= args.runners:
                online_s = time.monotonic() - t0
                break
            time.sleep(0.2)
        cpu_cores = server.cores()
        cpu_s = round(cpu_cores * (time.monotonic() - t0), 1)
        answers = [a for _ in workers for a in q.get(timeout=args.timeout)]
        for w in workers:
            w.join(30)
        # the one after the count: a new machine, the same token
        extra = asyncio.run(_join(Client(host, port), token, "enrol-extra", uuid.uuid4().hex))
        hosts = api.get("/api/hosts", params={"limit": 1000}).json()["data"]
        listed = api.get("/api/hosts/registration-tokens").json()["data"]
        tok = next(t for t in listed if t["id"] == token_id)
        joined = [a for a in answers if a["status"] == 201]
        report = {
            "runners": args.runners, "procs": procs, "token_uses": args.runners,
            "joined": len(joined), "refused": len(answers) - len(joined),
            "all_online_s": round(online_s, 2) if online_s is not None else None,
            "join_p50_s": _pct([a["join_s"] for a in answers], 50), "join_max_s": _pct([a["join_s"] for a in answers],
                                                                                     100),
            "join_retries": sum(a["retries"] for a in answers),
            "server_cpu_cores": cpu_cores, "server_cpu_s": cpu_s,
            "hosts": len(hosts), "duplicate_hosts": len(hosts) - len({h["id"] for h in hosts}),
            "duplicate_names": len(hosts) - len({h["name"] for h in hosts}),
            "duplicate_host_ids_given": len(joined) - len({a["host_id"] for a in joined}),
            "extra_status": extra["status"], "extra_detail": extra.get("detail", ""),
            "token_uses_left": tok["uses_left"],
            "loadavg_before": load_before, "loadavg_after": [round(x, 2) for x in os.getloadavg()],
            "cpus": os.cpu_count(),
        }
        ok = (report["joined"] == args.runners and report["hosts"] == args.runners and online_s is not None
              and report["duplicate_hosts"] == report["duplicate_names"] == report["duplicate_host_ids_given"] == 0
              and extra["status"] == 401 and tok["uses_left"] == 0)
        print(table(report))
        print(json.dumps(report, sort_keys=True), flush=True)
    finally:
        stack.stop()
        if ok:
            shutil.rmtree(state, ignore_errors=True)
        else:
            say(f"logs kept in {state / 'logs'}")
    if not ok:
        print("error: not every runner joined and came online once, or the one after the count was not refused",
              file=sys.stderr)
        return 1
    return 0


def _pct(values: list[float], p: int) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return round(s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))], 2)


def table(r: dict[str, Any]) -> str:
    rows = [
        ("runners joining at once (client processes)", f"{r['runners']} ({r['procs']})"),
        ("token uses", str(r["token_uses"])),
        ("joined / refused", f"{r['joined']} / {r['refused']}"),
        ("time until all online", f"{r['all_online_s']} s"),
        ("one join: median / slowest (retries)", f"{r['join_p50_s']} / {r['join_max_s']} s ({r['join_retries']})"),
        ("server CPU over that time", f"{r['server_cpu_s']} CPU-s ({r['server_cpu_cores']} cores)"),
        ("hosts / duplicate hosts, names, ids", f"{r['hosts']} / {r['duplicate_hosts']}, {r['duplicate_names']}, "
                                                f"{r['duplicate_host_ids_given']}"),
        ("the one after the count", f"{r['extra_status']} {r['extra_detail'][:80]}"),
        ("machine load before -> after (1/5/15 min)", f"{r['loadavg_before']} -> {r['loadavg_after']} "
                                                      f"on {r['cpus']} CPUs"),
    ]
    w = max(len(a) for a, _ in rows)
    return "\n".join(f"{a.ljust(w)}  {b}" for a, b in rows)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runners", type=int, default=200, help="runners joining at once (and the token's count)")
    p.add_argument("--procs", type=int, default=4, help="OS processes the runners are spread over")
    p.add_argument("--timeout", type=float, default=300.0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="hostbench enrol-load")
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
