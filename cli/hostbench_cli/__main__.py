"""./hostbench COMMAND — the one entry point of the product."""
import argparse
import os
import signal
import subprocess
import sys
import time

from hostbench_cli import ROOT, STATE
from hostbench_cli.build import frontend, kernels, say

PY = sys.executable


def cmd_up(args: argparse.Namespace) -> int:
    from hostbench_cli.stack import Stack

    kernels()
    dist = frontend()
    port = int(os.environ.get("HOSTBENCH_PORT", "8000"))
    bind = os.environ.get("HOSTBENCH_BIND", "127.0.0.1")
    stack = Stack(STATE, port, bind=bind, frontend_dist=dist)
    stop = {"now": False}

    def on_signal(signum: int, _frame: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        say("starting PostgreSQL, Redis, migrations, API, worker, runner")
        stack.start()
        h = stack.wait_healthy(30, runners=1)
        say(f"database {h['database']}, broker {h['broker']}, runners online {h['runners_online']}")
        say(f"hostbench is up: {stack.url}   (logs: {stack.logs}; Ctrl-C stops everything)")
        while not stop["now"]:
            for name in stack.supervise_once():
                say(f"{name} had stopped; restarted it (log: {stack.logs})")
            time.sleep(0.5)
    except RuntimeError as exc:
        say(f"error: {exc}")
        return 1
    finally:
        say("stopping every process started")
        stack.stop()
        say("stopped")
    return 0


def cmd_test(args: argparse.Namespace) -> int:
    from hostbench_cli.testing import run_all

    return run_all(args)


def _backend(argv: list[str]) -> int:
    return subprocess.call([PY, "-m", "app.cli", *argv], cwd=ROOT / "backend")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="./hostbench", description="hostbench: what your machines really deliver")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("up", help="start the whole system on embedded PostgreSQL and Redis (port $HOSTBENCH_PORT, 8000)")
    t = sub.add_parser("test", help="run every test: C kernels, runner, backend, integration, frontend, browser")
    t.add_argument("--only", action="append", default=[],
                   help="run only these suites (kernels, runner, backend, frontend, e2e); repeatable")
    t.add_argument("-k", dest="keyword", default=None, help="pytest -k expression for the Python suites")
    b = sub.add_parser("bench", help="our kernel vs the reference tool on this host, side by side (installs nothing)")
    b.add_argument("area", choices=["cpu", "memory", "disk", "network", "gpu"])
    b.add_argument("--pairs", type=int, default=3, help="interleaved A/B pairs (at least 3)")
    pa = sub.add_parser("parse", help="parse a reference tool's output (stream, hpl, hpcc, fio, iozone, iperf3, "
                        "iperf2, ping, sockperf) into JSON metrics")
    pa.add_argument("tool")
    pa.add_argument("file")
    sub.add_parser("token", help="print a new runner registration token (needs DATABASE_URL)")
    sub.add_parser("openapi", help="write frontend/openapi.json from the backend")
    args = p.parse_args(argv)
    if args.cmd == "up":
        return cmd_up(args)
    if args.cmd == "test":
        return cmd_test(args)
    if args.cmd == "bench":
        import importlib

        from hostbench_cli.bench.common import ToolMissing

        if args.pairs < 3:
            p.error("--pairs must be at least 3")
        try:
            mod = importlib.import_module(f"hostbench_cli.bench.{args.area}")
        except ModuleNotFoundError:
            print(f"bench {args.area}: not implemented yet", file=sys.stderr)
            return 2
        try:
            report = mod.run(args.pairs)
        except ToolMissing as exc:
            print(f"bench {args.area}: {exc}", file=sys.stderr)
            return 3
        report.print()
        return 0
    if args.cmd == "parse":
        from hostbench_runner.reftools.cli import main as parse_main

        return parse_main([args.tool, args.file])
    if args.cmd == "token":
        return _backend(["token"])
    if args.cmd == "openapi":
        env = dict(os.environ, DATABASE_URL=os.environ.get("DATABASE_URL", "postgresql+psycopg://unused@127.0.0.1:1/x"),
                   REDIS_URL=os.environ.get("REDIS_URL", "redis://127.0.0.1:1/0"))
        with open(ROOT / "frontend" / "openapi.json", "w") as f:
            return subprocess.call([PY, "-m", "app.cli", "openapi"], cwd=ROOT / "backend", stdout=f, env=env)
    return 2


if __name__ == "__main__":
    sys.exit(main())
