"""`./hostbench check` (a health check over hosts picked or labelled; --wait: follow it, print each host's verdict,
exit 1 when any host FAILED) and `./hostbench bands list|set|remove|export|import` (the expected bands, the file a
team keeps in git: YAML or JSON). They talk to a server as remote.py's commands do (--server, --token); the last
line `check --wait` prints is one JSON object."""
import argparse
import json
import sys
import time
from pathlib import Path
from typing import IO, Any

import yaml  # type: ignore[import-untyped]

from hostbench_cli.remote import (
    FOLLOW_OUTAGE_S,
    RemoteError,
    Server,
    Unreachable,
    add_server_arguments,
    fmt_value,
    resolve_host,
)
from hostbench_cli.safeout import escape

POLL_S = 3.0


def add_arguments(sub: Any) -> None:
    ck = sub.add_parser("check", help="a health check on a server's hosts: PASS / FAIL / DISTURBED / NO BASELINE "
                        "each (--wait: follow it; exit 1 when any host failed)")
    ck.add_argument("--suite", default="quick", help="quick, standard, burn-in, or any suite id (default quick)")
    who = ck.add_mutually_exclusive_group(required=True)
    who.add_argument("--hosts", help="comma-separated host names or ids")
    who.add_argument("--label", help="every live host with this label, key=value (e.g. rack=b12)")
    ck.add_argument("--kind", default="cpu", help="the kind learned bands take siblings from: cpu (model and "
                    "cores, the default) or a label key")
    ck.add_argument("--peer", default=None, help="a host (name or id) that serves the two-host items")
    ck.add_argument("--drain-on-fail", action="store_true", help="drain each FAILed host's Slurm node with the "
                    "check's reason (admins; the server needs HOSTBENCH_SLURM_DRAIN=1)")
    ck.add_argument("--wait", action="store_true", help="follow it to its verdicts")
    ck.add_argument("--timeout", type=float, default=None, help="with --wait: give up (exit 2) after this many s")
    ck.add_argument("--report", default=None, metavar="FILE", help="with --wait: save the HTML report here")
    add_server_arguments(ck)
    bd = sub.add_parser("bands", help="expected bands: list, set, remove, export, import (YAML or JSON)")
    bsub = bd.add_subparsers(dest="bands_cmd", required=True)
    ls = bsub.add_parser("list", help="the declared bands as they stand")
    ls.add_argument("--kind", default=None)
    ls.add_argument("--json", action="store_true")
    for name, text in (("set", "declare a band (a new version)"), ("remove", "remove a declared band")):
        s = bsub.add_parser(name, help=text)
        s.add_argument("--kind", required=True, help="cpu=<model>/<cores>, or a label key=value")
        s.add_argument("--experiment", required=True, help="the run kind: cpu, memory, disk, network_drive, ...")
        s.add_argument("--op", default=None)
        s.add_argument("--threads", type=int, required=True)
        s.add_argument("--block", type=int, default=None, help="block (or message) size in bytes")
        if name == "set":
            for bound in ("lower", "upper", "target"):
                s.add_argument(f"--{bound}", type=float, default=None)
            s.add_argument("--of-peak", action="store_true", help="the bounds are fractions of the peak")
            s.add_argument("--unit", default="")
            s.add_argument("--note", default="")
        add_server_arguments(s)
    ex = bsub.add_parser("export", help="every declared band as one file (YAML by the name's .yaml/.yml, else JSON)")
    ex.add_argument("file", nargs="?", default="-", help="default: stdout, as JSON")
    ex.add_argument("--kind", default=None)
    im = bsub.add_parser("import", help="set every band of a file (YAML or JSON); a version only where one differs")
    im.add_argument("file")
    im.add_argument("--replace", action="store_true", help="remove the declared bands the file lacks")
    for p in (ls, ex, im):
        add_server_arguments(p)


# ---- check ---------------------------------------------------------------------------------------------------------

def _host_ids(server: Server, names: str) -> list[int]:
    return [resolve_host(server, n.strip())[0] for n in names.split(",") if n.strip()]


def _worst(h: dict) -> str:
    fails = [f for f in h.get("figures") or [] if f["status"] == "fail"]
    if not fails:
        return escape(h.get("reason") or "")
    f, b = fails[0], fails[0].get("band") or {}
    k = f["figure"]
    where = f"{k['experiment']} {k.get('op') or ''} {k['threads']}t".replace("  ", " ")
    bound = b.get("lower") if b.get("lower") is not None and f["value"] < b["lower"] else b.get("upper")
    more = f" (+{len(fails) - 1} more)" if len(fails) > 1 else ""
    return (f"{escape(where)}: {fmt_value(f['value'], f['unit'])} vs {b.get('source')} bound "
            f"{fmt_value(bound, f['unit'])} ({f['distance'] * 100:+.0f} %), run {f['run_id']}{more}")


def table(check: dict) -> str:
    rows = [(escape(h["host_name"]), h["verdict"].replace("_", " "), _worst(h)) for h in check["hosts"]]
    w0 = max([4, *(len(r[0]) for r in rows)])
    w1 = max([7, *(len(r[1]) for r in rows)])
    out = [f"{'host':<{w0}}  {'verdict':<{w1}}  evidence"]
    out += [f"{a:<{w0}}  {b:<{w1}}  {c}" for a, b, c in rows]
    return "\n".join(out)


def follow(server: Server, check_id: int, timeout_s: float | None, out: IO[str] = sys.stderr) -> dict:
    start = time.monotonic()
    down_since: float | None = None
    last = ""
    while True:
        try:
            c = server.get_json(f"/api/checks/{check_id}", "reading the check")
            down_since = None
        except Unreachable:
            down_since = down_since or time.monotonic()
            if time.monotonic() - down_since > FOLLOW_OUTAGE_S:
                raise
            time.sleep(POLL_S)
            continue
        if c["status"] == "judged":
            return c
        pending = c["counts"].get("PENDING", 0)
        line = f"check {check_id}: suite run {c['suite_run_id']} {c['suite_status']}, {pending} host(s) pending"
        if line != last:
            print(line, file=out)
            last = line
        if timeout_s is not None and time.monotonic() - start > timeout_s:
            raise RemoteError(f"check {check_id} not judged after {timeout_s:.0f} s (it goes on on the server)")
        time.sleep(POLL_S)


def cmd_check(server: Server, args: argparse.Namespace, out: IO[str]) -> int:
    body: dict[str, Any] = {"suite": args.suite, "kind_by": args.kind, "drain_on_fail": args.drain_on_fail}
    if args.label:
        body["label"] = args.label
    else:
        body["host_ids"] = _host_ids(server, args.hosts)
    if args.peer:
        body["peer_host_id"] = _host_ids(server, args.peer)[0]
    c = server.request("POST", "/api/checks", "starting the check", json=body).json()
    print(f"health check {c['id']}: {c['title']} on {len(c['hosts'])} host(s), suite run {c['suite_run_id']}",
          file=sys.stderr)
    if not args.wait:
        print(c["id"], file=out)
        return 0
    c = follow(server, c["id"], args.timeout)
    print(table(c), file=sys.stderr)
    report = f"{server.url}/api/checks/{c['id']}/report"
    if args.report:
        r = server.request("GET", f"/api/checks/{c['id']}/report", "downloading the report")
        Path(args.report).write_bytes(r.content)
        print(f"report: {args.report}", file=sys.stderr)
    by = {v: [h["host_name"] for h in c["hosts"] if h["verdict"] == v] for v in
          ("FAIL", "DISTURBED", "NO_BASELINE", "PASS")}
    line = {"check": c["id"], "suite": c["suite"], "hosts": len(c["hosts"]),
            "counts": {k: v for k, v in c["counts"].items() if k != "PENDING"},
            "failed": by["FAIL"], "disturbed": by["DISTURBED"], "no_baseline": by["NO_BASELINE"],
            "failures": [{"host": h["host_name"], "figure": f["figure"], "value": f["value"], "unit": f["unit"],
                          "band": {k: (f.get("band") or {}).get(k) for k in ("source", "lower", "upper", "version")},
                          "distance": f["distance"], "run_id": f["run_id"]}
                         for h in c["hosts"] for f in h["figures"] if f["status"] == "fail"][:50],
            "report": report}
    out.write(json.dumps(line) + "\n")
    return 1 if by["FAIL"] else 0


# ---- bands ---------------------------------------------------------------------------------------------------------

def _key(args: argparse.Namespace) -> dict[str, Any]:
    return {"kind": args.kind, "experiment": args.experiment, "op": args.op, "threads": args.threads,
            "block_bytes": args.block}


def _yaml(path: str) -> bool:
    return path.endswith((".yaml", ".yml"))


def _load(path: str) -> Any:
    text = sys.stdin.read() if path == "-" else Path(path).read_text()
    if _yaml(path):
        return yaml.safe_load(text)
    return json.loads(text)


def cmd_bands(server: Server, args: argparse.Namespace, out: IO[str]) -> int:
    if args.bands_cmd == "list":
        data = server.get_json("/api/bands", "listing bands", kind=args.kind)["data"]
        if args.json:
            json.dump(data, out, indent=1)
            out.write("\n")
            return 0
        for b in data:
            rng = f"{fmt_value(b['lower'])} .. {fmt_value(b['upper'])} {b['unit']}{' of peak' if b['of_peak'] else ''}"
            print(escape(f"{b['kind']}  {b['experiment']} {b['op'] or ''} {b['threads']}t"
                         f"{' ' + str(b['block_bytes']) + ' B' if b['block_bytes'] else ''}: {rng}  v{b['version']} "
                         f"by {b['set_by']} {b['set_at'][:16]}{'  ' + b['note'] if b['note'] else ''}"), file=out)
        return 0
    if args.bands_cmd == "set":
        body = {**_key(args), "lower": args.lower, "upper": args.upper, "target": args.target,
                "of_peak": args.of_peak, "unit": args.unit, "note": args.note}
        b = server.request("PUT", "/api/bands", "setting the band", json=body).json()
        print(f"band {escape(b['kind'])} {b['experiment']} {b['op'] or ''}: version {b['version']}", file=out)
        return 0
    if args.bands_cmd == "remove":
        b = server.request("POST", "/api/bands/remove", "removing the band", json=_key(args)).json()
        print(f"band {escape(b['kind'])} {b['experiment']} removed (version {b['version']})", file=out)
        return 0
    if args.bands_cmd == "export":
        data = server.get_json("/api/bands/export", "exporting bands", kind=args.kind)
        if _yaml(args.file):
            text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        else:
            text = json.dumps(data, indent=1) + "\n"
        if args.file == "-":
            out.write(text)
        else:
            Path(args.file).write_text(text)
            print(f"{len(data['bands'])} band(s) written to {args.file}", file=sys.stderr)
        return 0
    if args.bands_cmd == "import":
        body = _load(args.file)
        r = server.request("POST", "/api/bands/import", "importing bands", json=body,
                           params={"replace": "true" if args.replace else "false"}).json()
        print(json.dumps(r), file=out)
        return 0
    raise RemoteError(f"unknown bands command {args.bands_cmd}")


def main(args: argparse.Namespace) -> int:
    server: Server | None = None
    try:
        server = Server.from_args(args)
        if args.cmd == "check":
            return cmd_check(server, args, sys.stdout)
        return cmd_bands(server, args, sys.stdout)
    except (RemoteError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted (a started check goes on on the server)", file=sys.stderr)
        return 130
    finally:
        if server is not None:
            server.close()
