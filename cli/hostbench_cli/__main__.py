"""./hostbench COMMAND — the one entry point of the product."""
import argparse
import getpass
import importlib
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from app.cli import add_admin_command
from hostbench_bench import AREAS
from hostbench_bench.common import BenchReport, ToolMissing, exit_on_sigterm
from hostbench_common.reftools.cli import main as parse_main
from hostbench_common.runstatus import RunStatus
from hostbench_harness import chaos as chaos_cli
from hostbench_harness import enrolload, faults, load
from hostbench_harness.load import size
from hostbench_stack import ROOT, STATE, admin, settings
from hostbench_stack.build import frontend, kernels, say
from hostbench_stack.services import api_workers
from hostbench_stack.stack import Stack
from hostbench_stack.testing import PY_PACKAGES, run_all

from hostbench_cli import checks, mesh, remote
from hostbench_cli import slurm as slurm_cli
from hostbench_cli.remote import add_server_arguments
from hostbench_cli.safeout import install as safe_output

PY = sys.executable


def cmd_up(args: argparse.Namespace) -> int:
    try:
        env = settings.load()
    except settings.SettingError as exc:
        say(f"error: {exc}")
        return 2
    port, bind = env.port, env.bind
    # the runners' control process: a fixed port (installed runners keep the URL), the next one by default
    control_port = env.runner_port or port + 1
    if control_port == port or control_port > 65535:
        say(f"error: ports {port} (HOSTBENCH_PORT) and {control_port} (HOSTBENCH_RUNNER_PORT) must be two "
            "different numbers in 1..65535")
        return 2
    running = admin.live_up()
    if running is not None:
        say(f"error: ./hostbench up is already running (pid {running['pid']}, {running.get('public_url')})")
        return 1
    try:
        kernels()
        dist = frontend()
    except (RuntimeError, subprocess.CalledProcessError, OSError) as exc:
        say(f"error: the build failed: {exc}")
        return 1
    try:
        workers, control = api_workers(), api_workers(setting="HOSTBENCH_CONTROL_WORKERS")
    except RuntimeError as exc:
        say(f"error: {exc}")
        return 2
    stack = Stack(STATE, port, bind=bind, frontend_dist=dist, api_workers=workers, control_port=control_port,
                  control_workers=control)
    stop = {"now": False}

    def on_signal(signum: int, _frame: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        lock = admin.state_lock(STATE, wait_s=120)
        lock.__enter__()
    except admin.Busy:
        say(f"error: another ./hostbench holds {STATE / admin.LOCK} (an `up`, or a command using the embedded "
            "database); stop it first")
        return 1
    try:
        say("starting PostgreSQL and Redis")
        stack.start_services()
        say("applying the database migrations")
        stack.migrate()
        link = stack.bootstrap_admin()
        stack.start(report=say)  # services and migrations are done: API, worker, beat and the runner
        h = stack.wait_healthy(runners=1, report=say)
        admin.record(STATE, database_url=stack.database_url, redis_url=stack.redis_url, api_url=stack.url,
                     public_url=stack.public_url)
        say(f"database {h['database']}, broker {h['broker']}, runners online {h['runners_online']}")
        say(f"hostbench is up: {stack.public_url}   (runners: port {stack.control_port}; logs: {stack.logs}; "
            "Ctrl-C stops everything)")
        if link:
            say("first start: created the user 'admin'. Open this one-time link to sign in and set a password")
            say(f"(it works once, within 24 h; `./hostbench sign-in-link admin` makes another):\n\n    {link}\n")
        while not stop["now"]:
            for line in stack.supervise_once():
                say(line)
            time.sleep(0.5)
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        say(f"error: {exc}")
        return 1
    finally:
        say("stopping every process started")
        admin.forget(STATE)
        stack.stop()
        lock.__exit__(None, None, None)
        say("stopped")
    return 0


LOCK_FILE = ROOT / "requirements.lock"
UV = "uv>=0.9"


def cmd_lock(upgrade: bool) -> int:
    """Regenerate requirements.lock (every Python dependency of our packages, test extras too, pinned with hashes
    for Python 3.11+ on any platform) with uv, installed into .venv when missing. Our own packages are resolved from
    the checkout (each pyproject's [tool.uv.sources]) and left out: ./hostbench installs them editable."""
    uv = Path(PY).parent / "uv"
    if not uv.exists():
        say(f"installing {UV} into {Path(PY).parent.parent} (pip)")
        subprocess.run([PY, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", UV], check=True)
    argv = [str(uv), "pip", "compile", "--quiet", "--universal", "--python-version", "3.11", "--generate-hashes",
            "--extra", "test", "--custom-compile-command", "./hostbench lock",
            *(f"{folder}/pyproject.toml" for folder, _ in PY_PACKAGES), "-o", LOCK_FILE.name]
    for folder, _ in PY_PACKAGES:
        argv += ["--no-emit-package", tomllib.loads((ROOT / folder / "pyproject.toml").read_text())["project"]["name"]]
    if upgrade:
        argv.append("--upgrade")
    r = subprocess.run(argv, cwd=ROOT)
    if r.returncode == 0:
        say(f"wrote {LOCK_FILE.name}; ./hostbench installs from it on its next start")
    return r.returncode


def _read_password(name: str) -> str:
    """The new user's password: typed twice at a terminal (never echoed), else all of stdin."""
    if sys.stdin.isatty():
        pw = getpass.getpass(f"password for {name} (empty: a one-time sign-in link instead): ")
        if pw and getpass.getpass("again: ") != pw:
            raise RuntimeError("the two passwords differ")
        return pw
    return sys.stdin.read().rstrip("\r\n")


def _one_line_error(text: str) -> str:
    """The message of a backend command that failed: its own `error: ...` line, else the last exception's
    message (a traceback's last `SomeError: ...` line), on one line."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        if ln.startswith("error:"):
            return ln
    for ln in reversed(lines):
        m = re.match(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit)):\s*(.*)$", ln)
        if m:
            return f"error: {m.group(1).rsplit('.', 1)[-1]}: {m.group(2)}"
    return f"error: {lines[-1]}" if lines else ""


def cmd_admin(argv: list[str], *, stdin: str = "", link: bool = False) -> int:
    """One backend admin command (python -m app.cli) on the database found by hostbench_stack.admin; a path
    it prints (a sign-in link) is printed as a full URL."""
    try:
        with admin.database() as stack:
            r = subprocess.run([PY, "-m", "app.cli", *argv], cwd=ROOT / "backend", env=stack.env(), input=stdin,
                               capture_output=True, text=True)
            base = stack.public_url
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if r.returncode != 0:
        print(_one_line_error(r.stderr or r.stdout) or f"error: python -m app.cli {argv[0]} exited with "
              f"{r.returncode}", file=sys.stderr)
        return r.returncode
    for line in r.stdout.splitlines():
        print(f"{base}{line}" if link and line.startswith("/") else line)
    return 0


def cmd_test(args: argparse.Namespace) -> int:
    return run_all(args)


def parser() -> argparse.ArgumentParser:
    """Every command of ./hostbench, and each one's arguments."""
    p = argparse.ArgumentParser(prog="./hostbench", description="hostbench: what your machines really deliver")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("up", help="start the whole system on embedded PostgreSQL and Redis (port $HOSTBENCH_PORT, 8000)")
    t = sub.add_parser("test", help="run every test: C kernels, runner, backend, integration, frontend, browser")
    t.add_argument("--only", action="append", default=[],
                   help="run only these suites (lint, kernels, runner, backend, fleet, frontend, e2e); repeatable")
    t.add_argument("-k", dest="keyword", default=None, help="pytest -k expression for the Python suites")
    b = sub.add_parser("bench", help="our kernel vs the reference tool on this host, side by side (installs nothing)")
    b.add_argument("area", choices=AREAS)
    b.add_argument("--pairs", type=int, default=3, help="interleaved A/B pairs (at least 3)")
    ld = sub.add_parser("load", help="the real stack under simulated runners, live streams and dashboard reads")
    load.add_arguments(ld)
    sz = sub.add_parser("size", help="a synthetic fleet's year of history in a real-schema database, then the reads, "
                        "retention, disk and ingest measured at that size")
    size.add_arguments(sz)
    ch = sub.add_parser("chaos", help="faults injected into the real stack by pid; the ledger checked after each")
    chaos_cli.add_arguments(ch)
    pa = sub.add_parser("parse", help="parse a reference tool's output (stream, hpl, hpcc, fio, iozone, iperf3, "
                        "iperf2, ping, sockperf) into JSON metrics")
    pa.add_argument("tool")
    pa.add_argument("file")
    pa.add_argument("--import", dest="do_import", action="store_true",
                    help="store the metrics (parsed by the server) as a history row of --host, marked imported")
    pa.add_argument("--host", default=None, help="with --import: the host (name or id) whose history gets the row")
    add_server_arguments(pa)
    rn = sub.add_parser("runs", help="list a server's runs (or --wait ID: follow one to its end)")
    rn.add_argument("--host", default=None, help="only this host's runs (name or id)")
    rn.add_argument("--status", default=None,
                    choices=[s.value for s in RunStatus])
    rn.add_argument("--limit", type=int, default=20, help="at most this many, newest first (default 20, at most "
                    f"{remote.RUNS_MAX})")
    rn.add_argument("--json", action="store_true", help="the runs as the API gives them, as JSON")
    rn.add_argument("--wait", type=int, default=None, metavar="ID", help="follow run ID instead (as `wait`)")
    add_server_arguments(rn)
    rs = sub.add_parser("run", help="start a suite on a server's hosts (--wait: follow it; exit 0 when every run "
                        "succeeded)")
    rs.add_argument("suite", help="a suite's id: quick, full (GET /api/suites lists them)")
    rs.add_argument("--hosts", required=True, help="comma-separated host names or ids")
    rs.add_argument("--peer", default=None, help="a host (name or id) that only serves the two-host items: each host "
                    "picked drives to it (without one, they run between the first two hosts picked)")
    rs.add_argument("--wait", action="store_true", help="follow the suite's progress to its end")
    rs.add_argument("--timeout", type=float, default=None, help="with --wait: give up (exit 2) after this many s")
    rs.add_argument("--json", action="store_true", help="print the suite run as the API gives it")
    add_server_arguments(rs)
    ms = sub.add_parser("mesh", help="test hosts together over TCP: all pairs in rounds, or many to one (--wait: "
                        "the matrix; exit 0 when every link was measured)")
    mesh.add_arguments(ms)
    add_server_arguments(ms)
    checks.add_arguments(sub)  # check, bands
    ft = sub.add_parser("faults", help="the health check's injected-fault measurement: N runners in namespaces, some "
                        "held back (CPU quota, disk throttle, shaped link); a table and one JSON line (root)")
    faults.add_arguments(ft)
    wt = sub.add_parser("wait", help="follow a run's live progress; exit 0 when it succeeded, 1 otherwise")
    wt.add_argument("run_id", type=int)
    wt.add_argument("--timeout", type=float, default=None, help="give up (exit 2) after this many seconds")
    add_server_arguments(wt)
    ex = sub.add_parser("export", help="a run's result and samples as CSV or JSON, or its samples as NDJSON")
    ex.add_argument("run_id", type=int)
    ex.add_argument("--format", choices=["csv", "json", "ndjson"], default="csv")
    ex.add_argument("-o", "--output", default=None, metavar="FILE", help="write here (default: stdout)")
    add_server_arguments(ex)
    add_admin_command(sub, "token")
    slurm_cli.add_arguments(sub)
    enrolload.add_arguments(sub.add_parser("enrol-load", help="N runners join with one enrolment token of count N "
                                           "at once on a stack of our own; the N+1st refused: a table, a JSON line"))
    users = sub.add_parser("user", help="manage users").add_subparsers(dest="user_cmd", required=True)
    add_admin_command(users, "user-add", "add")
    add_admin_command(sub, "api-token")
    add_admin_command(sub, "sign-in-link")
    sub.add_parser("openapi", help="write frontend/openapi.json from the backend")
    sub.add_parser("routes", help="write the route table (route -> who may call it) into docs/security.md")
    lk = sub.add_parser("lock", help="regenerate requirements.lock from the pyproject files (with uv)")
    lk.add_argument("--upgrade", action="store_true", help="move every pin to the newest allowed version")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = parser()
    args = p.parse_args(argv)
    if args.cmd not in ("up", "test", "load", "chaos"):  # those show our own processes' logs, colours included
        safe_output()  # no runner- or server-set text reaches the terminal as control characters (safeout.py)
    if args.cmd == "up":
        return cmd_up(args)
    if args.cmd == "test":
        return cmd_test(args)
    if args.cmd == "bench":
        exit_on_sigterm()
        if args.pairs < 3:
            p.error("--pairs must be at least 3")
        try:
            mod = importlib.import_module(f"hostbench_bench.{args.area}")
        except ModuleNotFoundError:
            print(f"bench {args.area}: not implemented yet", file=sys.stderr)
            return 2
        try:
            report = mod.run(args.pairs)
        except ToolMissing as exc:
            # what this host lacks for the whole area (no fio, no CUDA device): still the report and its JSON
            # line, the reason in `skipped`, exit 3
            print(f"bench {args.area}: {exc}", file=sys.stderr, flush=True)
            report = BenchReport(args.area, skipped=[f"{args.area}: {exc}"])
            report.print()
            return 3
        report.print()
        return 0
    if args.cmd == "load":
        return load.run(args)
    if args.cmd == "size":
        return size.run(args)
    if args.cmd == "chaos":
        kernels()  # the trials run real runners, which run the real kernel: a fresh clone has none built yet
        return chaos_cli.run(args)
    if args.cmd == "parse":
        if args.do_import:
            if not args.host:
                p.error("parse --import needs --host NAME|ID")
            return remote.main(args)
        return parse_main([args.tool, args.file])
    if args.cmd == "faults":
        kernels()
        return faults.run(args)
    if args.cmd in ("check", "bands"):
        return checks.main(args)
    if args.cmd == "mesh":
        return remote.main(args, lambda server, a: mesh.cmd_mesh(server, a, sys.stdout))
    if args.cmd in ("runs", "wait", "export", "run"):
        if args.cmd == "runs" and not 1 <= args.limit <= remote.RUNS_MAX:
            p.error(f"--limit must be 1..{remote.RUNS_MAX}")
        return remote.main(args)
    if args.cmd == "slurm":
        return slurm_cli.main(args)
    if args.cmd == "enrol-load":
        return enrolload.run(args)
    # the admin commands: declared by app.cli (add_admin_command), so the words given here are handed on as they are
    if args.cmd in ("token", "api-token", "sign-in-link"):
        return cmd_admin([args.cmd, *argv[1:]], link=args.cmd == "sign-in-link")
    if args.cmd == "user":
        try:
            password = _read_password(args.name)
        except (RuntimeError, EOFError, KeyboardInterrupt) as exc:
            print(f"error: {exc or 'no password read'}", file=sys.stderr)
            return 1
        rc = cmd_admin(["user-add", *argv[2:]], stdin=password, link=True)
        if rc == 0:
            print(f"created {args.role} {args.name!r}" + ("" if password else
                  "; the link above signs them in once (24 h), then they set a password"), file=sys.stderr)
        return rc
    if args.cmd == "lock":
        return cmd_lock(args.upgrade)
    # openapi and routes read the application only: placeholder URLs, nothing is connected to
    given = settings.load()
    env = dict(os.environ, DATABASE_URL=given.database_url or "postgresql+psycopg://unused@127.0.0.1:1/x",
               REDIS_URL=given.redis_url or "redis://127.0.0.1:1/0")
    if args.cmd == "openapi":
        with open(ROOT / "frontend" / "openapi.json", "w") as f:
            return subprocess.call([PY, "-m", "app.cli", "openapi"], cwd=ROOT / "backend", stdout=f, env=env)
    if args.cmd == "routes":
        r = subprocess.run([PY, "-m", "app.cli", "routes"], cwd=ROOT / "backend", env=env, capture_output=True,
                           text=True)
        if r.returncode != 0:
            print(_one_line_error(r.stderr) or "error: python -m app.cli routes failed", file=sys.stderr)
            return r.returncode
        doc = ROOT / "docs" / "security.md"
        begin, end = "<!-- routes:begin -->\n", "<!-- routes:end -->"
        text = doc.read_text()
        if begin not in text or end not in text:
            print(f"error: {doc} has no {begin.strip()} ... {end} markers", file=sys.stderr)
            return 1
        head, rest = text.split(begin, 1)
        doc.write_text(f"{head}{begin}{r.stdout.strip()}\n{end}{rest.split(end, 1)[1]}")
        say(f"wrote the route table into {doc.relative_to(ROOT)}")
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
