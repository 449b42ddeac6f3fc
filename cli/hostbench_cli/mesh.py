"""`./hostbench mesh`: hosts tested together over TCP (POST /api/meshes): all pairs in rounds, or many clients to
one server. With --wait it follows the mesh to its end, prints the matrix (rows drive, columns serve: Mbit/s and
the round trip in µs) on stderr and one JSON line on stdout (id, status, wall time, slowest link and host), and
exits 0 when every link was measured, 1 otherwise."""
import argparse
import json
import sys
import time
from typing import IO, Any

from hostbench_cli.remote import RemoteError, Server, resolve_host


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hosts", required=True, help="comma-separated host names or ids (many to one: the clients)")
    p.add_argument("--mode", choices=["all_pairs", "all_pairs_both_ways", "many_to_one"], default="all_pairs",
                   help="all_pairs: each pair once (n-1 rounds); all_pairs_both_ways: each ordered pair; "
                   "many_to_one: every host picked drives to --server-host at once")
    p.add_argument("--server-host", default=None, help="many_to_one: the host every client drives to")
    p.add_argument("--ops", default="tcp_stream,tcp_rr", help="tcp_stream (Mbit/s), tcp_rr (round trip); both by "
                   "default")
    p.add_argument("--params", default=None, help="the network_pair parameters every job shares, as JSON "
                   "(e.g. '{\"duration_s\": 2}')")
    p.add_argument("--wait", action="store_true", help="follow the mesh to its end and print its matrix")
    p.add_argument("--timeout", type=float, default=None, help="with --wait: give up (exit 2) after this many s")


def body_of(server: Server, args: argparse.Namespace) -> dict[str, Any]:
    hosts = [resolve_host(server, h.strip())[0] for h in args.hosts.split(",") if h.strip()]
    body: dict[str, Any] = {"mode": args.mode, "host_ids": hosts,
                            "ops": [o.strip() for o in args.ops.split(",") if o.strip()]}
    if args.server_host:
        body["server_host_id"] = resolve_host(server, args.server_host)[0]
    if args.params:
        try:
            body["params"] = json.loads(args.params)
        except ValueError as exc:
            raise RemoteError(f"--params is not JSON: {exc}") from None
    return body


def matrix_text(m: dict[str, Any]) -> str:
    """The matrix as text: a row per driving host, a column per serving host, "Mbit/s / µs" in each cell."""
    names = {h["id"]: h["name"] for h in m["hosts"]}
    if m.get("server"):
        names[m["server"]["id"]] = m["server"]["name"]
    cells = {(c["client_host_id"], c["server_host_id"]): c for c in m["cells"]}
    rows = sorted({c for c, _ in cells}, key=lambda h: names.get(h, ""))
    cols = sorted({s for _, s in cells}, key=lambda h: names.get(h, ""))

    def cell(c: dict[str, Any] | None) -> str:
        if c is None:
            return "-"
        if c["mbps"] is None and c["rtt_us"] is None:
            return c["status"]
        mbps = f"{c['mbps']:.0f}" if c["mbps"] is not None else "?"
        rtt = f"{c['rtt_us']:.0f}" if c["rtt_us"] is not None else "?"
        return f"{mbps} / {rtt}"

    table = [["drives \\ serves", *[names.get(h, str(h)) for h in cols]]]
    table += [[names.get(r, str(r)), *[cell(cells.get((r, s))) for s in cols]] for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = ["  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)) for row in table]
    lines.append("cells: Mbit/s / round trip µs")
    if m.get("slowest_link"):
        link = m["slowest_link"]
        lines.append(f"slowest link: {names.get(link['client_host_id'])} -> {names.get(link['server_host_id'])} "
                     f"{link['mbps']:.0f} Mbit/s")
    if m.get("slowest_host"):
        lines.append(f"slowest host: {m['slowest_host']['name']} ({m['slowest_host']['mean_mbps']:.0f} Mbit/s mean)")
    if m.get("aggregate_mbps") is not None:
        lines.append(f"aggregate: {m['aggregate_mbps']:.0f} Mbit/s over {m.get('overlap_s') or 0:.1f} s together")
    return "\n".join(lines)


def summary(m: dict[str, Any]) -> dict[str, Any]:
    return {k: m.get(k) for k in ("id", "mode", "status", "rounds", "wall_s", "runs", "slowest_link", "slowest_host",
                                  "aggregate_mbps")}


def cmd_mesh(server: Server, args: argparse.Namespace, out: IO[str], *, poll_s: float = 3.0) -> int:
    r = server.request("POST", "/api/meshes", "starting the mesh", json=body_of(server, args))
    m = r.json()
    print(f"mesh {m['id']}: {m['mode']} over {len(m['hosts'])} hosts, {len(m['cells'])} links in {m['rounds']} "
          "rounds", file=sys.stderr)
    if not args.wait:
        print(m["id"], file=out)
        return 0
    t0 = time.monotonic()
    while m["status"] not in ("done", "cancelled"):
        if args.timeout is not None and time.monotonic() - t0 > args.timeout:
            print(f"mesh {m['id']} still {m['status']} after {args.timeout:.0f} s; it goes on (cancel it: POST "
                  f"/api/meshes/{m['id']}/cancel)", file=sys.stderr)
            return 2
        time.sleep(poll_s)
        m = server.get_json(f"/api/meshes/{m['id']}", f"mesh {m['id']}")
    print(matrix_text(m), file=sys.stderr)
    out.write(json.dumps(summary(m)) + "\n")
    return 0 if m["status"] == "done" and all(c["status"] == "succeeded" for c in m["cells"]) else 1
