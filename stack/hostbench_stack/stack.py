"""The whole system as child processes: PostgreSQL and Redis (embedded unless DATABASE_URL / REDIS_URL
point elsewhere), migrations, the FastAPI API (the dashboard's processes on the public port, and the runners'
control process on its own port), a Celery worker and beat, and a runner for this host.
Used by `./hostbench up`, by `./hostbench test` and by the integration tests."""
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import psutil

from hostbench_stack import ROOT, settings
from hostbench_stack.build import step
from hostbench_stack.private import private_dir
from hostbench_stack.progress import STALL_SETTING, Watched, died_message, stall_s, status_line
from hostbench_stack.services import (
    EmbeddedPostgres,
    EmbeddedRedis,
    api_workers,
    free_port,
    stop_process,
    stop_processes,
)

if TYPE_CHECKING:
    from hostbench_stack.cpulimit import CpuLimit

PY = sys.executable
# A runner's exit statuses that another start cannot change (hostbench_runner.daemon): not restarted.
RUNNER_FINAL = {2: "its configuration is wrong", 3: "its credential was revoked"}
# The dashboard's API processes yield the CPU to the runners' control process, PostgreSQL and the kernels when
# the machine is short of it (CFS: nice 5 weighs about a third of nice 0); with CPU to spare it changes nothing.
DASHBOARD_NICE = 5


def _short(answer: object) -> str:
    """A health answer or error, on one short line."""
    if isinstance(answer, dict):
        bad = {k: v for k, v in answer.items() if isinstance(v, str) and v != "ok" and k != "status"}
        return f"{answer.get('status', '?')}" + (f" ({bad})" if bad else "")
    return str(answer)[:200]


def yield_cpu(pid: int, nice: int) -> None:
    """Lower the CPU priority of the session `pid` leads. `nice` alone is not enough: with the kernel's autogroup
    scheduling on (Debian's default), every session is one scheduling group and groups share the CPU equally
    whatever their members' nice values, so a niced process in a session of its own gained nothing (measured:
    the dashboard's process took as much CPU as the runners'). The group's own nice is /proc/PID/autogroup
    (raising it needs no privilege). Without autogroup, the process's nice does the work."""
    try:
        Path(f"/proc/{pid}/autogroup").write_text(f"{nice}\n")
    except OSError:
        pass  # no autogroup (kernel without it, or turned off): the nice the child was started with applies


@dataclass
class Child:
    name: str
    argv: list[str]
    cwd: Path
    env: dict[str, str]
    log: Path
    proc: subprocess.Popen | None = None
    restarts: list[float] = field(default_factory=list)
    nice: int = 0  # a lower CPU priority for the whole child, threads and worker processes included (yield_cpu)
    log_from: int = 0  # the log's size when the child last started: what this start wrote comes after
    on_start: list = field(default_factory=list)  # called with each new pid (Stack.cpu_limit puts it in a cgroup)

    def start(self) -> None:
        private_dir(self.log.parent)  # logs can hold what people typed: only we may read them
        self.log_from = self.log.stat().st_size if self.log.exists() else 0
        logf = open(self.log, "ab")  # noqa: SIM115 - handed to the child
        argv = ["nice", "-n", str(self.nice), *self.argv] if self.nice else self.argv
        self.proc = subprocess.Popen(argv, cwd=self.cwd, env=self.env, stdout=logf, stderr=logf,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        for hook in self.on_start:
            hook(self.proc.pid)
        if self.nice:
            yield_cpu(self.proc.pid, self.nice)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class Stack:
    def __init__(self, state: Path, port: int | None = None, *, durable: bool = True, with_runner: bool = True,
                 runner_name: str | None = None, bind: str = "127.0.0.1", database: str = "hostbench",
                 fresh_database: bool = False, frontend_dist: Path | None = None,
                 database_url: str | None = None, redis_url: str | None = None, extra_env: dict | None = None,
                 api_workers: int | None = None, control_port: int | None = None,
                 control_workers: int | None = None, cpu_limit: "CpuLimit | None" = None):
        self.state = state
        self.cpu_limit = cpu_limit  # every process of the stack held to a share of a CPU (the starved-machine test)
        self.port = port or free_port()
        # The runners' control process (docs/architecture.md, "Concurrency"): its own port, its own CPU share.
        self.control_port = control_port or free_port()
        self.bind = bind
        self.durable = durable
        self.with_runner = with_runner
        self.runner_name = runner_name
        self.database = database
        self.fresh_database = fresh_database
        self.frontend_dist = frontend_dist
        self.logs = state / "logs"
        self.pg: EmbeddedPostgres | None = None
        self.redis: EmbeddedRedis | None = None
        self.children: dict[str, Child] = {}
        self.database_url = database_url or ""
        self.redis_url = redis_url or ""
        self.extra_env = extra_env or {}
        self.api_workers = api_workers
        self.serving_control = False  # start_api: the runners' control port is served too (wait_healthy asks it)
        self.control_workers = control_workers
        self.stopping = False
        self.given_up: set[str] = set()  # children the supervisor will not restart (supervise_once)
        self._admin_headers: dict[str, str] | None = None
        self.migrated = False

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.bind in ("0.0.0.0", "::") else self.bind  # noqa: S104
        return f"http://{host}:{self.port}"

    @property
    def control_url(self) -> str:
        """Where this stack's runners send their control traffic (claims, leases, samples, heartbeats)."""
        host = "127.0.0.1" if self.bind in ("0.0.0.0", "::") else self.bind  # noqa: S104
        return f"http://{host}:{self.control_port}"

    # -- services -----------------------------------------------------------------------------------
    def start_services(self) -> None:
        if self.database_url:
            pass
        elif given := settings.load().database_url:
            self.database_url = given
        else:
            # every API process (the dashboard's and the runners') may hold two pools of 12 + 6 connections
            # (app.core.db) and 16 for the runners' calls on its event loop (app.runner_api.fast); the Celery
            # worker, beat, admin commands and tests need some besides
            processes = sum(self._workers())
            self.pg = EmbeddedPostgres(self.state / "pgdata", self.logs / "postgres.log", durable=self.durable,
                                       max_connections=max(200, 52 * processes + 60))
            self.pg.start()
            self.database_url = self.pg.create_database(self.database, fresh=self.fresh_database)
        if self.redis_url:
            pass
        elif given := settings.load().redis_url:
            self.redis_url = given
        else:
            self.redis = EmbeddedRedis(self.state / "redis", self.logs / "redis.log", durable=self.durable)
            self.redis_url = self.redis.start()
        if self.cpu_limit is not None:
            for svc in (self.pg, self.redis):
                if svc is not None and svc.proc is not None:
                    self._limit_tree(svc.proc.pid, self.cpu_limit)

    @staticmethod
    def _limit_tree(pid: int, limit: "CpuLimit") -> None:
        """A running process and those it started (PostgreSQL's background processes) into `limit`."""
        for p in [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]:
            try:
                limit.add(p.pid)
            except OSError:
                pass  # exited meanwhile

    def env(self) -> dict[str, str]:
        env = dict(os.environ, DATABASE_URL=self.database_url, REDIS_URL=self.redis_url, PYTHONUNBUFFERED="1",
                   **self.extra_env)
        if self.frontend_dist:
            env["FRONTEND_DIST"] = str(self.frontend_dist)
        return env

    def migrate(self) -> None:
        # its output in logs/migrate.log; slow, it says how long so far and names the log; failed, its last lines
        step("database migrations", [PY, "-m", "alembic", "-c", str(ROOT / "migrations" / "alembic.ini"), "upgrade",
                                     "head"], self.logs / "migrate.log", cwd=ROOT / "backend", env=self.env())
        self.migrated = True

    # -- processes ----------------------------------------------------------------------------------
    def _child(self, name: str, argv: list[str], cwd: Path, env: dict[str, str] | None = None, nice: int = 0,
               limit: "CpuLimit | None" = None) -> Child:
        c = Child(name, argv, cwd, env or self.env(), self.logs / f"{name}.log", nice=nice)
        limit = limit or self.cpu_limit
        if limit is not None:  # before it has started anything of its own (a Python child takes 100s of ms to)
            c.on_start.append(limit.add)
        self.children[name] = c
        c.start()
        return c

    @property
    def public_url(self) -> str:
        """The address people use: HOSTBENCH_PUBLIC_URL when set (a proxy in front), else the one we serve."""
        return (self.extra_env.get("HOSTBENCH_PUBLIC_URL") or settings.load().public_url
                or self.url).rstrip("/")

    def start_api(self) -> None:
        """Two kinds of API process, the same application: the dashboard's (HOSTBENCH_API_WORKERS uvicorn workers
        on the public port, at a lower CPU priority) and the runners' control process on its own port. A stampede
        of dashboard requests then takes the dashboard's processes' CPU, never the one lease renewals need: a
        slow page is a nuisance, a lost lease fails a benchmark (issue 11; docs/architecture.md, "Concurrency").
        Both kinds are one child, "api": one supervisor imports the application once for both (issue 28)."""
        env = self.env()
        given = settings.load(env)  # what the children are given, read as the CLI's settings
        if not given.public_url and self.bind not in ("0.0.0.0", "::"):  # noqa: S104
            # bound to one address: that is the public URL. Bound to all, the API takes the request's Host
            # (after its allowed-hosts check), so that "Add host" shows the address a person reached it by.
            env["HOSTBENCH_PUBLIC_URL"] = self.url
        if not given.trusted_proxies and not env.get("HOSTBENCH_RUNNER_URL"):
            # "Add host" hands runners the control port on the public URL's host (app.hosts.router.runner_base_url).
            # With a proxy in front (trusted proxies named), the proxy sends the runners' paths to the control
            # port itself (docs/deploy.md), and runners use the public URL.
            env.setdefault("HOSTBENCH_RUNNER_PORT", str(self.control_port))
        trusted = given.trusted_proxies
        # X-Forwarded-For decides the address a runner is recorded with: trusted only from named proxies
        proxy = ["--proxy-headers", "--forwarded-allow-ips", trusted] if trusted else ["--no-proxy-headers"]
        # API processes: HOSTBENCH_API_WORKERS, else this stack's own choice (`up` sizes it to the machine; tests 1)
        workers, control = self._workers()
        # both kinds under one supervisor of our own (hostbench_stack.serve): the application imported once for
        # both, each kind's workers forked onto its own port, the dashboard's at a lower CPU priority; no worker
        # killed for being slow to start; --http: a deadline for a request's headers (backend/app/core/server.py)
        self.serving_control = True
        self._child("api", [PY, "-m", "hostbench_stack.serve", "app.main:app", "--host", self.bind,
                            "--kind", f"dashboard:{self.port}:{workers}:{DASHBOARD_NICE}",
                            "--kind", f"control:{self.control_port}:{control}:0", *proxy,
                            "--http", "app.core.server:HeaderDeadline", "--no-access-log",
                            "--timeout-graceful-shutdown", "5"], ROOT / "backend", env)

    def _workers(self) -> tuple[int, int]:
        """(dashboard, control) API processes: the settings, else this stack's own choice (`up` sizes them to the
        machine; tests and tools 1 each)."""
        return (api_workers(self.api_workers if self.api_workers is not None else 1),
                api_workers(self.control_workers if self.control_workers is not None else 1,
                            "HOSTBENCH_CONTROL_WORKERS"))

    def start_worker(self) -> None:
        celery = [PY, "-m", "celery", "-A", "app.worker.celery_app"]
        self._child("worker", [*celery, "worker", "--loglevel", "INFO", "--concurrency", "2", "--pool", "prefork",
                               "--hostname", f"worker-{self.port}@%h"], ROOT / "backend")
        self._child("beat", [*celery, "beat", "--loglevel", "INFO",
                             "--schedule", str(self.state / "celerybeat-schedule")], ROOT / "backend")

    # -- admin commands (python -m app.cli, on this stack's database) ----------------------------------
    def admin(self, *argv: str, stdin: str = "") -> str:
        """Run one backend admin command against this stack's database; its stdout, stripped."""
        r = subprocess.run([PY, "-m", "app.cli", *argv], cwd=ROOT / "backend", env=self.env(), input=stdin,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"python -m app.cli {argv[0]} failed ({r.returncode}): "
                               f"{(r.stderr or r.stdout).strip()[-2000:]}")
        return r.stdout.strip()

    def registration_token(self) -> str:
        return self.admin("token")

    def create_user(self, name: str, role: str, password: str | None = None) -> str | None:
        """Create a user; with no password, returns the full one-time sign-in link, else None."""
        out = self.admin("user-add", name, "--role", role, stdin=password or "")
        return f"{self.public_url}{out}" if out.startswith("/") else None

    def api_token(self, name: str, label: str = "stack") -> str:
        """A new personal API token (hbpat_...) for the user `name`."""
        return self.admin("api-token", name, "--label", label)

    def bootstrap_admin(self) -> str | None:
        """When nobody exists yet: creates `admin` and returns its full one-time sign-in link."""
        out = self.admin("bootstrap-admin")
        return f"{self.public_url}{out}" if out else None

    def admin_headers(self) -> dict[str, str]:
        """`Authorization` for an admin of this stack (user `stack-admin`, created once) for tests and tools."""
        if self._admin_headers is None:
            try:  # the user and its token in one admin process
                out = self.admin("user-add", "stack-admin", "--role", "admin", "--api-token", "stack")
                token = out.splitlines()[-1]
            except RuntimeError as exc:
                if "exist" not in str(exc):
                    raise
                token = self.api_token("stack-admin")
            self._admin_headers = {"Authorization": f"Bearer {token}"}
        return dict(self._admin_headers)

    def start_runner(self, name: str = "runner", state_dir: Path | None = None, extra_env: dict | None = None,
                     prefix: list[str] | None = None, cpu_limit: "CpuLimit | None" = None) -> Child:
        """A runner for this stack; `prefix` wraps its argv (e.g. `ip netns exec NAME`: a runner on another
        "host"), and extra_env's HOSTBENCH_SERVER then names the address it reaches the API at. `cpu_limit`: its
        own CPU quota (a small host), else the stack's."""
        state_dir = state_dir or self.state / "runner"
        env = {**self.env(), "HOSTBENCH_SERVER": self.control_url, "HOSTBENCH_RUNNER_STATE": str(state_dir),
               "HOSTBENCH_KERNEL_BIN": str(ROOT / "runner" / "kernels" / "build" / "hbk"), **(extra_env or {})}
        env.pop("DATABASE_URL", None)  # the runner knows the API only, with its own credential
        env.pop("REDIS_URL", None)
        if self.runner_name and "HOSTBENCH_RUNNER_NAME" not in (extra_env or {}):
            env["HOSTBENCH_RUNNER_NAME"] = self.runner_name
        if not (state_dir / "credential.json").exists():
            env["HOSTBENCH_REGISTRATION_TOKEN"] = self.registration_token()
        return self._child(name, [*(prefix or []), PY, "-m", "hostbench_runner"], ROOT / "runner", env,
                           limit=cpu_limit)

    def _ready(self, health: dict) -> bool:
        """Health says ok; or, for a stack that runs no Celery beat (a test's bare API), everything but the
        scheduler is ok: beat's mark never comes there, and health reports it late once the API is three
        reconcile periods old (on a busy machine the first answer can come later than that)."""
        if health.get("status") == "ok":
            return True
        if "beat" in self.children:
            return False
        return all(health.get(k) == "ok" for k in ("database", "broker", "reconciler"))

    def wait_healthy(self, *, runners: int = 0, stall: float | None = None, report=None) -> dict:
        """Wait until health says ready (with `runners` runners online), for as long as every starting process is
        alive and making progress (hostbench_stack.progress): no stopwatch. Fails, naming the process, the cause,
        its log and the log's last lines, when one died or made no progress for `stall` seconds (default:
        HOSTBENCH_START_STALL_S). `report` gets a line on what is still awaited every 20 s."""
        limit = stall_s() if stall is None else stall
        t0 = last_report = time.monotonic()
        watched = [Watched(c.name, c.proc.pid, c.log, c.log_from) for c in self.children.values()
                   if c.proc is not None]
        all_ready_since: float | None = None
        last: object = None
        while True:
            if not self.stopping:
                for c in self.children.values():
                    if not c.alive():
                        raise RuntimeError(died_message(c.name, c.proc.pid if c.proc else 0,
                                                        c.proc.returncode if c.proc else None, c.log, c.log_from))
                for svc in (self.pg, self.redis):
                    if svc is not None and svc.proc is not None and svc.proc.poll() is not None:
                        raise RuntimeError(died_message(type(svc).__name__.removeprefix("Embedded"), svc.proc.pid,
                                                        svc.proc.returncode, svc.log))
            try:
                # a long timeout: on a starved machine the answer itself can take many seconds; slow is not down
                r = httpx.get(f"{self.url}/api/health", timeout=30)
                last = health = r.json()
                if r.status_code == 200 and self._ready(health) and health["runners_online"] >= runners:
                    if not self.serving_control:
                        return health
                    ctl = httpx.get(f"{self.control_url}/api/health", timeout=30)  # the runners' process too
                    last = {"control process": ctl.status_code}
                    if ctl.status_code == 200:
                        return health
            except (httpx.HTTPError, ValueError) as exc:
                last = exc
            now = time.monotonic()
            for w in watched:
                w.look(now)
                if w.stalled(now, limit):
                    raise RuntimeError(w.stall_message(limit))
            if all(w.ready for w in watched):
                all_ready_since = all_ready_since or now
                if now - all_ready_since > limit:
                    raise RuntimeError(f"every process is serving, but the system did not become healthy within "
                                       f"{limit:.0f} s ({STALL_SETTING}): {last}")
            else:
                all_ready_since = None
            if report is not None and now - last_report >= 20:
                report(status_line(watched, t0, now) + (f"; health: {_short(last)}" if last else ""))
                last_report = now
            time.sleep(0.5)

    def start(self, report=None) -> "Stack":
        """Everything, then wait until healthy with the runner online. A runner with a stored credential starts with
        the API (it retries until the API answers; its own start overlaps the API's); one that must register starts
        once the API answers: registration spends a one-time token, and one sent to an API still loading can time
        out at the runner after the server took the token (its retry is then refused)."""
        def say(line: str) -> None:
            if report is not None:
                report(line)

        self.start_services()
        if not self.migrated:
            say("applying the database migrations")
            self.migrate()
        workers, control = self._workers()
        say(f"starting the API ({workers} dashboard + {control} runner-control processes), the Celery worker and beat")
        self.start_api()
        self.start_worker()
        if self.with_runner and (self.state / "runner" / "credential.json").exists():
            say("starting the runner (registered before)")
            self.start_runner()
        elif self.with_runner:
            self.wait_healthy(report=report)
            say("the API answers; starting a runner for this host (it registers)")
            self.start_runner()
        self.wait_healthy(runners=1 if self.with_runner else 0, report=report)
        return self

    def supervise_once(self) -> list[str]:
        """Restart any child that died (at most 5 times a minute each); returns one line per child restarted or
        given up on. A runner that exited 2 (its configuration) or 3 (its credential was revoked) is not
        restarted: another start would fail the same way (the systemd unit says RestartPreventExitStatus=2 3)."""
        restarted = []
        for c in self.children.values():
            if c.alive() or self.stopping or c.name in self.given_up:
                continue
            rc = c.proc.poll() if c.proc is not None else None
            if c.name.startswith("runner") and rc in RUNNER_FINAL:
                self.given_up.add(c.name)
                restarted.append(f"{c.name} exited {rc} ({RUNNER_FINAL[rc]}); not restarted (log: {c.log})")
                continue
            now = time.monotonic()
            c.restarts = [t for t in c.restarts if now - t < 60]
            if len(c.restarts) >= 5:
                continue
            c.restarts.append(now)
            c.start()
            restarted.append(f"{c.name} had stopped; restarted it (log: {c.log})")
        for svc in (self.pg, self.redis):
            if svc is not None and svc.proc is not None and svc.proc.poll() is not None and not self.stopping:
                svc.start()
                restarted.append(f"{type(svc).__name__} had stopped; restarted it")
        return restarted

    def stop(self) -> None:
        self.stopping = True
        # the runners first (each ends its work with the API up), then the rest together
        runners = [c.proc for n, c in self.children.items() if n.startswith("runner")]
        rest = [c.proc for n, c in self.children.items() if not n.startswith("runner")]
        for group in (runners, rest):
            stop_processes(group, signal.SIGTERM, timeout=15)
        for c in self.children.values():
            stop_process(c.proc, signal.SIGKILL, timeout=5)
        if self.redis:
            self.redis.stop()
        if self.pg:
            self.pg.stop()

    def __enter__(self) -> "Stack":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
