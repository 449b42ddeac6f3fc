"""./hostbench test: every suite against real parts. PostgreSQL and Redis are embedded and started here
when DATABASE_URL / REDIS_URL are not set; the integration and browser suites start the API, a Celery
worker and runners as real processes (two for the browser suite: e2e-host and e2e-peer). The lint suite runs
ruff and mypy over every Python package (PY_PACKAGES) (TypeScript's eslint and tsc run in the frontend suite); the fleet
suite runs a small `./hostbench chaos`, a small `./hostbench load`, the Slurm lab (`./hostbench slurm lab`) and a small
`./hostbench enrol-load` (their long runs are done by hand)."""
import argparse
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from hostbench_stack import ROOT, STATE, netns, settings, slurmlab
from hostbench_stack.build import (
    FRONTEND,
    KERNELS,
    apt_install,
    arm64_tools,
    arm64_tools_missing,
    chromium,
    chromium_missing,
    frontend,
    kernels,
    node_env,
    npm_install,
    say,
    test_tools,
    test_tools_missing,
)
from hostbench_stack.services import EmbeddedPostgres, EmbeddedRedis
from hostbench_stack.stack import Stack

PY = sys.executable
SUITES = ("lint", "kernels", "runner", "backend", "fleet", "frontend", "e2e")
# (package folder, what mypy checks there)
PY_PACKAGES = (("common", "hostbench_common"), ("backend", "app"), ("runner", "hostbench_runner"),
               ("stack", "hostbench_stack"), ("harness", "hostbench_harness"), ("bench", "hostbench_bench"),
               ("cli", "hostbench_cli"))
# the packages of ./hostbench itself, whose own tests travel with the runner suite (pure logic, and a few small
# stacks of their own)
TOOL_PACKAGES = ("stack", "harness", "bench", "cli")
# The small runs CI makes: every chaos scenario once (PostgreSQL down, Redis down, a part hung and the partition 5 s
# each, instead of 20, 20, 20 and 10; 5 s still outlasts the 2-s fence of the chaos profile's 3-s lease more than
# twice), and a load of 50 runners (10 running) with 20 live streams and 50 dashboard reads/s for 6 s, with a
# burst of 100 simultaneous reads. Both fail on any loss.
CHAOS_SMALL = ["chaos", "--trials", "1", "--pg-outage-s", "5", "--redis-outage-s", "5", "--hang-s", "5",
               "--partition-s", "5"]
LOAD_SMALL = ["load", "--runners", "50", "--running", "10", "--streams", "20", "--streams-per-user", "10",
              "--reads", "50", "--seconds", "6", "--idle-seconds", "2", "--burst", "100"]


def _run(name: str, argv: list[str], cwd: Path, env: dict[str, str], echo: bool = True) -> tuple[bool, int, int, str]:
    """Run one suite; its output streams to ours (echo), or is returned whole to be printed when it ends."""
    if echo:
        say(f"suite {name}: {' '.join(argv)}")
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            stdin=subprocess.DEVNULL)
    out = []
    assert proc.stdout is not None
    for line in proc.stdout:
        if echo:
            sys.stdout.write(line)
        out.append(line)
    rc = proc.wait()
    if name == f"backend-{ALONE}" and rc == NO_TESTS:
        rc = 0
    text = re.sub(r"\x1b\[[0-9;]*m", "", "".join(out[-60:]))
    # test runners' summaries ("12 passed, 1 failed"); chaos and load are judged by their exit status alone (their
    # notes say things like "run 39 failed 3.9 s in", which is no count of tests)
    counted = name not in OWN_STACK
    passed = _count(text, r"(\d+) passed") if counted else 0
    failed = _count(text, r"(\d+) failed") if counted else 0
    summary = f"suite {name}: exit {rc}, {passed} passed, {failed} failed, {time.monotonic() - t0:.0f} s"
    if echo:
        say(summary)
        return rc == 0, passed, failed, text
    return rc == 0, passed, failed, f"[hostbench] suite {name}: {' '.join(argv)}\n{''.join(out)}[hostbench] {summary}\n"


# The backend tests marked `alone` (backend/pyproject.toml) judge a measurement's validity on this machine (the
# injected-fault check: a host's CPU share, its repeats' spread); they run after the backend suite, with nothing
# beside them. Beside it, on 2026-11-29, CI's lanes left the check's undisturbed hosts 30-58 % of a CPU: every host
# DISTURBED in three checks, so the held host had no baseline and was never judged.
ALONE = "alone"
# pytest's exit status when a selection leaves no test (a -k that picks none of the `alone` tests): nothing failed
NO_TESTS = 5
# The fleet suite's steps: each starts its own stack on its own PostgreSQL and Redis, and reports no pytest counts
OWN_STACK = ("chaos", "load", "slurm", "enrol")
# Suites that run beside the backend suite, whose real stacks and processes leave CPU idle much of its time, in two
# lanes (sequences) of their own; their output is printed whole when the backend suite has ended. One: the ARM64
# build under qemu-user (35 s), lint and types, the runner's tests, the dashboard's tsc, eslint and vitest. Two: the
# small load run (it judges loss and answers), the tests of common and of ./hostbench's packages, the Slurm lab and
# the 50-runner enrolment (neither judges timing: their bounds are minutes), then the browser suite's stack is
# started. The suites that judge timing run alone: the kernels' own checks, the small chaos run (it bounds
# how long a run may wait after a fault: beside the backend suite, "worker-kill: run 4 waited 7.2 s to start (limit
# 7 s)" failed a CI run here), and the browser suite.
BESIDE_BACKEND = (("kernels-arm64", *(f"{tool}-{folder}" for folder, _ in PY_PACKAGES for tool in ("ruff", "mypy")),
                   "runner", "frontend-types", "frontend-lint", "frontend"),
                  ("load", "common", *TOOL_PACKAGES, "slurm", "enrol"))


BACKEND_WORKERS = settings.load().backend_workers or min(2, os.cpu_count() or 1)


def why_failed(text: str) -> str:
    """A failed suite's reason in a line: what its closing JSON line (chaos, load) found wrong, the pytest summary's
    FAILED lines, or else its last line of output."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if ln.startswith("{"):
            try:
                line = json.loads(ln)
            except ValueError:
                break
            found = [f"error: {line['error']}"] if line.get("error") else []
            for scenario, row in (line.get("chaos") or {}).items():
                if row.get("ok") is False:  # its non-zero counts, and its first notes
                    notes = "; ".join(row.get("notes") or [])
                    found.append(f"{scenario} " + ", ".join(f"{k} {v}" for k, v in row.items()
                                                          if type(v) is int and v and k != "trials")
                                 + (f" ({notes})" if notes else ""))
            for k in ("runs_lost", "server_errors", "batches_rejected", "unsent_after_drain"):
                if line.get(k):
                    found.append(f"{k}={line[k]}")
            return "; ".join(found) or ln[:300]
    failed = [ln for ln in lines if ln.startswith(("FAILED ", "ERROR "))]
    return "; ".join(failed[:5]) if failed else (lines[-1][:300] if lines else "no output")


def _count(text: str, pattern: str) -> int:
    found = re.findall(pattern, text)
    return int(found[-1]) if found else 0


def run_all(args: argparse.Namespace) -> int:
    only = set(args.only) or set(SUITES)
    unknown = only - set(SUITES)
    if unknown:
        say(f"unknown suite(s) {sorted(unknown)}; choose from {SUITES}")
        return 2
    # npm ci (mostly waiting on the disk and the registry) runs while the kernels build and apt looks for tools
    npm: threading.Thread | None = None
    npm_error: list[BaseException] = []
    if only & {"frontend", "e2e"}:
        def _npm() -> None:
            try:
                npm_install()
            except BaseException as exc:  # noqa: BLE001 - re-raised below, in this thread
                npm_error.append(exc)
        npm = threading.Thread(target=_npm, name="npm-ci", daemon=True)
        npm.start()
    # The Debian packages the chosen suites need, in one apt-get beside the kernels' build (one index update, not
    # three); a failure here is left to the per-purpose installs below, which say what will skip and why.
    packages = [*(arm64_tools_missing() if only & {"kernels", "runner"} else []),
                *(test_tools_missing() if only & {"runner", "backend"} else []),
                *(chromium_missing() if "e2e" in only else []),
                *(slurmlab.missing() if "fleet" in only else [])]
    apt: threading.Thread | None = None
    if packages and os.geteuid() == 0:
        def _apt() -> None:
            try:
                # (Slurm's daemons and munge: not started by the install, and left disabled: the lab runs its own)
                slurm = set(packages) & set(slurmlab.SLURM_PACKAGES)
                apt_install(packages, "the suites chosen need them (ARM64 check, reference tools, the browser, "
                            "Slurm)", no_start="munge" if slurm else None)
                if slurm:
                    slurmlab.disable_units()
            except (RuntimeError, subprocess.CalledProcessError) as exc:
                say(f"apt-get failed ({exc}); each suite's own install will try again")
        apt = threading.Thread(target=_apt, name="apt-get", daemon=True)
        apt.start()
    kernels()
    if apt is not None:
        apt.join()
    if only & {"kernels", "runner"}:  # for kernels/tests/check_arm64.py and runner/tests/test_arm64_install.py
        arm64_tools()
    if only & {"runner", "backend"}:
        test_tools()
    if npm is not None:
        npm.join()
        if npm_error:
            raise npm_error[0]
    STATE.mkdir(exist_ok=True)
    state = Path(tempfile.mkdtemp(prefix="test-", dir=STATE))
    pg = redis = None
    # HOSTBENCH_FMA_PROBE=0: the many runners the suites start skip the FMA probe (seconds of a core each, on every
    # fresh state directory); runner/tests/test_fma_probe_cache.py runs it, and the chaos and load stacks set it too.
    env = dict(os.environ, PYTHONUNBUFFERED="1", HOSTBENCH_TEST_STATE=str(state), HOSTBENCH_FMA_PROBE="0")
    results: list[tuple[str, bool, int, int]] = []
    why: dict[str, str] = {}  # a failed suite's reason, for the summary (a CI page may show only the end of the log)
    try:
        if not settings.load().database_url:
            pg = EmbeddedPostgres(state / "pgdata", state / "logs" / "postgres.log", durable=False)
            pg.start()
            env["HOSTBENCH_TEST_PG_SERVER"] = pg.url("postgres")
        if not settings.load().redis_url:
            redis = EmbeddedRedis(state / "redis", state / "logs" / "redis.log", durable=False)
            env["REDIS_URL"] = redis.start()
        pytest_k = ["-k", args.keyword] if args.keyword else []
        plan: list[tuple[str, list[str], Path]] = []
        if "lint" in only:
            for folder, target in PY_PACKAGES:
                plan.append((f"ruff-{folder}", [PY, "-m", "ruff", "check", "--no-cache", "."], ROOT / folder))
                # one cache for every run, new for each test run: the second and later reuse what the first
                # analysed of the libraries they share (SQLAlchemy, FastAPI, pydantic), instead of each starting over
                plan.append((f"mypy-{folder}", [PY, "-m", "mypy", "--cache-dir", str(state / "mypy-cache"), target],
                             ROOT / folder))
        # mypy does not follow the editable installs' import hooks: it finds the sibling packages here
        env["MYPYPATH"] = os.pathsep.join(str(ROOT / folder) for folder, _ in PY_PACKAGES)
        if "kernels" in only:
            plan.append(("kernels", ["make", "-s", "-C", str(KERNELS), "check"], ROOT))
            # the ARM64 build under qemu-user checks correctness, not speed: apart from the kernels' timed checks
            plan.append(("kernels-arm64", ["python3", "tests/check_arm64.py", "build"], KERNELS))
        if "runner" in only:
            plan.append(("runner", [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_k, "tests"],
                         ROOT / "runner"))
            # the common package's own tests (the reference tools' parsers and `./hostbench parse`) go with it
            plan.append(("common", [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_k, "tests"],
                         ROOT / "common"))
            # ./hostbench's own packages' tests (bench interleaving, the report line, the stack's start) go with it
            for folder in TOOL_PACKAGES:
                plan.append((folder, [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_k, "tests"],
                             ROOT / folder))
        if "backend" in only:
            # --durations: the slowest tests in the log, where CI time is won or lost. Two worker processes, a module
            # to each (pytest-xdist; each its own database and Redis: tests/conftest.py): alone, one process kept
            # one core busy of two (600 s wall, 638 s CPU here), much of it waiting on real stacks.
            workers = ["-n", str(BACKEND_WORKERS), "--dist", "loadfile"] if BACKEND_WORKERS > 1 else []
            plan.append(("backend", [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=25", *workers,
                                     "-m", f"not {ALONE}", *pytest_k, "tests"], ROOT / "backend"))
            plan.append((f"backend-{ALONE}", [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=5",
                                              "-m", ALONE, *pytest_k, "tests"], ROOT / "backend"))
        if "fleet" in only:
            plan.append(("chaos", [PY, "-m", "hostbench_cli", *CHAOS_SMALL], ROOT))
            plan.append(("load", [PY, "-m", "hostbench_cli", *LOAD_SMALL], ROOT))
            # issue 30: a real Slurm cluster (slurmctld, 4 slurmd in network namespaces) and one-shot runners through
            # it, a failed node drained; and 50 runners joining at once on one token of 50, the 51st refused
            plan.append(("slurm", [PY, "-m", "hostbench_cli", "slurm", "lab"], ROOT))
            plan.append(("enrol", [PY, "-m", "hostbench_cli", "enrol-load", "--runners", "50", "--procs", "2"], ROOT))
        if "frontend" in only:
            plan.append(("frontend-types", ["npm", "run", "--silent", "typecheck"], FRONTEND))
            plan.append(("frontend-lint", ["npm", "run", "--silent", "lint"], FRONTEND))
            plan.append(("frontend", ["npm", "test", "--silent"], FRONTEND))
        # chaos and load start their own stack on their own embedded PostgreSQL and Redis, as a person's run does
        own_services = {k: v for k, v in env.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        def env_of(name: str, cwd: Path) -> dict[str, str]:
            if name == "kernels":
                return dict(env, HBK_CHECK_ARM64="0")  # kernels-arm64 runs it
            return node_env(env) if cwd == FRONTEND else own_services if name in OWN_STACK else env

        # Beside the backend suite: one lane per entry of BESIDE_BACKEND, each a sequence of suites
        lanes = [sorted((step for step in plan if step[0] in lane), key=lambda step: lane.index(step[0]))
                 for lane in BESIDE_BACKEND] if "backend" in only else []
        lanes = [lane for lane in lanes if lane]
        beside = [step for lane in lanes for step in lane]
        side_results: dict[str, tuple[bool, int, int, str]] = {}

        e2e = E2E(env, state, pg) if "e2e" in only else None

        def run_lane(lane: list[tuple[str, list[str], Path]], first: bool) -> None:
            if first and e2e is not None:  # the browser suite's dashboard build, off its critical path
                try:
                    frontend(typecheck=False)
                except (OSError, subprocess.CalledProcessError) as exc:
                    say(f"building the dashboard beside the backend suite failed ({exc}); the browser suite tries")
            for name, argv, cwd in lane:
                ok, p, f, text = _run(name, argv, cwd, env_of(name, cwd), echo=False)
                side_results[name] = (ok, p, f, text)
                say(f"suite {name} (beside the backend suite): exit {0 if ok else 1}")
            if not first and e2e is not None:  # the browser suite's stack, started while the backend suite ends
                e2e.prepare()

        sides = [threading.Thread(target=run_lane, args=(lane, i == 0), name=f"suites-beside-backend-{i}", daemon=True)
                 for i, lane in enumerate(lanes)]
        for name, argv, cwd in plan:
            if (name, argv, cwd) in beside:
                continue
            if name == "backend" and beside:
                say("beside the backend suite, in " + "; ".join(", ".join(n for n, _, _ in lane) for lane in lanes)
                    + " (their output follows it)")
                for side in sides:
                    side.start()
            ok, p, f, text = _run(name, argv, cwd, env_of(name, cwd))
            results.append((name, ok, p, f))
            if not ok:
                why[name] = why_failed(text)
            if name == "backend" and beside:
                for side in sides:
                    side.join()
                for s_name, _, _ in beside:
                    s_ok, s_p, s_f, text = side_results[s_name]
                    sys.stdout.write(text)
                    results.append((s_name, s_ok, s_p, s_f))
                    if not s_ok:
                        why[s_name] = why_failed(text)
                sys.stdout.flush()
        if e2e is not None:
            for side in sides:  # (a lane still starting the browser suite's stack)
                side.join()
            e2e.prepare()
            results.append(e2e.run())
    finally:
        if redis:
            redis.stop()
        if pg:
            pg.stop()
        if all(ok for _, ok, _, _ in results):
            shutil.rmtree(state, ignore_errors=True)
        else:
            say(f"logs kept in {state}/logs")
    total_p = sum(p for _, _, p, _ in results)
    total_f = sum(f for _, _, _, f in results)
    failed_suites = [n for n, ok, _, _ in results if not ok]
    for name, ok, p, f in results:
        reason = f": {why[name]}" if why.get(name) else ""
        say(f"  {'ok  ' if ok else 'FAIL'} {name:15s} {p} passed, {f} failed{reason}")
    if failed_suites:
        total_f = max(total_f, len(failed_suites))
    print(f"total: {total_p} passed, {total_f} failed", flush=True)
    return 1 if failed_suites else 0


class E2E:
    """The browser suite's stack: started by prepare() (beside the backend suite's end, when that runs: starting it
    is no timing), then run() runs Playwright against it and stops it."""

    def __init__(self, env: dict[str, str], state: Path, pg: EmbeddedPostgres | None):
        self.env, self.state, self.pg = env, state, pg
        self.stack: Any = None
        self.ns: Any = None
        self.e2e_env: dict[str, str] | None = None
        self.error: str | None = None
        self.prepared = threading.Event()

    def prepare(self) -> None:
        if self.prepared.is_set():
            return
        try:
            self._prepare()
        except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
            self.error = str(exc)
        finally:
            self.prepared.set()

    def _prepare(self) -> None:
        browser = chromium()
        dist = frontend(typecheck=False)  # (built beside the backend suite when that ran)
        stack_env = {"REDIS_URL": self.env["REDIS_URL"]}
        if self.pg is not None:
            stack_env["DATABASE_URL"] = self.pg.create_database("hostbench_e2e", fresh=True)
        # The fleet spec's second host: a network namespace that reaches the server at its veth address, which is
        # therefore the public URL (install commands name it); the API listens on every address to be reached there.
        why_not = netns.available()
        fleet_env: dict[str, str] = {}
        if why_not is None:
            try:
                outer, inner = netns.free_pair()
                self.ns = netns.Netns(f"hbe2e{os.getpid() % 100000}", outer, inner).create()
            except RuntimeError as exc:
                why_not = str(exc)
        ns = self.ns
        stack = self.stack = Stack(self.state / "e2e", frontend_dist=dist, runner_name="e2e-host",
                                   database_url=stack_env.get("DATABASE_URL"), redis_url=stack_env["REDIS_URL"])
        if ns is not None:
            stack.bind = "0.0.0.0"  # noqa: S104 - the namespace reaches the API at the veth address
            stack.extra_env["HOSTBENCH_PUBLIC_URL"] = f"http://{ns.outer_ip}:{stack.port}"
            fleet_env = {"HOSTBENCH_FLEET_NETNS": ns.name, "HOSTBENCH_FLEET_ADDRESS": ns.inner_ip,
                         "HOSTBENCH_PUBLIC_URL": f"http://{ns.outer_ip}:{stack.port}"}
        else:
            say(f"e2e: the fleet spec will skip: {why_not}")
        say("e2e: starting the stack")
        stack.start(report=say)
        # A second host for two-host network jobs, registered after e2e-host so that e2e-host stays the
        # first host listed (the specs that need one host use it by name or as the first).
        stack.start_runner("runner-peer", stack.state / "runner-peer", {"HOSTBENCH_RUNNER_NAME": "e2e-peer"})
        stack.wait_healthy(runners=2)
        # The people the browser signs in as: one per role, one password for all (random for this run)
        password = secrets.token_urlsafe(18)
        people = (("e2e-admin", "admin"), ("e2e-operator", "operator"), ("e2e-viewer", "viewer"))
        with ThreadPoolExecutor(len(people)) as pool:  # three admin processes at once, not one after another
            list(pool.map(lambda person: stack.create_user(person[0], person[1], password), people))
        say("e2e: the stack is up with its two runners and the people who sign in")
        # where "Add host" must send runners: the runners' own API process, on the host people reach
        runner_server = f"http://{ns.outer_ip if ns is not None else '127.0.0.1'}:{stack.control_port}"
        self.e2e_env = node_env(dict(self.env, HOSTBENCH_URL=stack.url, HOSTBENCH_RUNNER_SERVER=runner_server,
                                     CHROMIUM_PATH=browser, HOSTBENCH_E2E_ADMIN="e2e-admin",
                                     HOSTBENCH_E2E_OPERATOR="e2e-operator", HOSTBENCH_E2E_VIEWER="e2e-viewer",
                                     HOSTBENCH_E2E_PASSWORD=password, **fleet_env))

    def run(self) -> tuple[str, bool, int, int]:
        try:
            if self.e2e_env is None:
                say(f"e2e stack failed: {self.error}")
                return "e2e", False, 0, 1
            # HOSTBENCH_E2E_ONLY="verdicts hosts": only the spec files whose names match (the sign-in setup always
            # runs)
            only_specs = list(settings.load().e2e_only)
            ok, p, f, _ = _run("e2e", ["npm", "run", "--silent", "e2e", *(["--", *only_specs] if only_specs else [])],
                               FRONTEND, self.e2e_env)
            return "e2e", ok, p, f
        finally:
            if self.stack is not None:
                self.stack.stop()
            if self.ns is not None:
                self.ns.destroy()
