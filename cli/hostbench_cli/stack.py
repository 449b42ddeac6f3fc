"""The whole system as child processes: PostgreSQL and Redis (embedded unless DATABASE_URL / REDIS_URL
point elsewhere), migrations, the FastAPI API, a Celery worker and beat, and a runner for this host.
Used by `./hostbench up`, by `./hostbench test` and by the integration tests."""
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from hostbench_cli import ROOT
from hostbench_cli.services import (
    EmbeddedPostgres,
    EmbeddedRedis,
    _tail,
    api_workers,
    free_port,
    private_dir,
    stop_process,
)

PY = sys.executable
# A runner's exit statuses that another start cannot change (hostbench_runner.daemon): not restarted.
RUNNER_FINAL = {2: "its configuration is wrong", 3: "its credential was revoked"}


@dataclass
class Child:
    name: str
    argv: list[str]
    cwd: Path
    env: dict[str, str]
    log: Path
    proc: subprocess.Popen | None = None
    restarts: list[float] = field(default_factory=list)

    def start(self) -> None:
        private_dir(self.log.parent)  # logs can hold what people typed: only we may read them
        logf = open(self.log, "ab")  # noqa: SIM115 - handed to the child
        self.proc = subprocess.Popen(self.argv, cwd=self.cwd, env=self.env, stdout=logf, stderr=logf,
                                     stdin=subprocess.DEVNULL, start_new_session=True)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class Stack:
    def __init__(self, state: Path, port: int | None = None, *, durable: bool = True, with_runner: bool = True,
                 runner_name: str | None = None, bind: str = "127.0.0.1", database: str = "hostbench",
                 fresh_database: bool = False, frontend_dist: Path | None = None,
                 database_url: str | None = None, redis_url: str | None = None, extra_env: dict | None = None,
                 api_workers: int | None = None):
        self.state = state
        self.port = port or free_port()
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
        self.stopping = False
        self.given_up: set[str] = set()  # children the supervisor will not restart (supervise_once)
        self._admin_headers: dict[str, str] | None = None
        self.migrated = False

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.bind in ("0.0.0.0", "::") else self.bind  # noqa: S104
        return f"http://{host}:{self.port}"

    # -- services -----------------------------------------------------------------------------------
    def start_services(self) -> None:
        if self.database_url:
            pass
        elif os.environ.get("DATABASE_URL"):
            self.database_url = os.environ["DATABASE_URL"]
        else:
            self.pg = EmbeddedPostgres(self.state / "pgdata", self.logs / "postgres.log", durable=self.durable)
            self.pg.start()
            self.database_url = self.pg.create_database(self.database, fresh=self.fresh_database)
        if self.redis_url:
            pass
        elif os.environ.get("REDIS_URL"):
            self.redis_url = os.environ["REDIS_URL"]
        else:
            self.redis = EmbeddedRedis(self.state / "redis", self.logs / "redis.log", durable=self.durable)
            self.redis_url = self.redis.start()

    def env(self) -> dict[str, str]:
        env = dict(os.environ, DATABASE_URL=self.database_url, REDIS_URL=self.redis_url, PYTHONUNBUFFERED="1",
                   **self.extra_env)
        if self.frontend_dist:
            env["FRONTEND_DIST"] = str(self.frontend_dist)
        return env

    def migrate(self) -> None:
        r = subprocess.run([PY, "-m", "alembic", "-c", str(ROOT / "migrations" / "alembic.ini"), "upgrade", "head"],
                           cwd=ROOT / "backend", env=self.env(), capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"migrations failed:\n{r.stderr[-4000:]}")
        self.migrated = True

    # -- processes ----------------------------------------------------------------------------------
    def _child(self, name: str, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> Child:
        c = Child(name, argv, cwd, env or self.env(), self.logs / f"{name}.log")
        self.children[name] = c
        c.start()
        return c

    @property
    def public_url(self) -> str:
        """The address people use: HOSTBENCH_PUBLIC_URL when set (a proxy in front), else the one we serve."""
        return (self.extra_env.get("HOSTBENCH_PUBLIC_URL") or os.environ.get("HOSTBENCH_PUBLIC_URL")
                or self.url).rstrip("/")

    def start_api(self) -> None:
        env = self.env()
        if not env.get("HOSTBENCH_PUBLIC_URL") and self.bind not in ("0.0.0.0", "::"):  # noqa: S104
            # bound to one address: that is the public URL. Bound to all, the API takes the request's Host
            # (after its allowed-hosts check), so that "Add host" shows the address a person reached it by.
            env["HOSTBENCH_PUBLIC_URL"] = self.url
        trusted = env.get("HOSTBENCH_TRUSTED_PROXIES", "").strip()
        # X-Forwarded-For decides the address a runner is recorded with: trusted only from named proxies
        proxy = ["--proxy-headers", "--forwarded-allow-ips", trusted] if trusted else ["--no-proxy-headers"]
        # API processes: HOSTBENCH_API_WORKERS, else this stack's own choice (`up` sizes it to the machine; tests 1)
        workers = api_workers(self.api_workers if self.api_workers is not None else 1)
        more = ["--workers", str(workers)] if workers > 1 else []
        self._child("api", [PY, "-m", "uvicorn", "app.main:app", "--host", self.bind, "--port", str(self.port),
                            *proxy, *more, "--no-access-log", "--timeout-graceful-shutdown", "5"],
                    ROOT / "backend", env)

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

    def sign_in_link(self, name: str) -> str:
        return f"{self.public_url}{self.admin('sign-in-link', name)}"

    def bootstrap_admin(self) -> str | None:
        """When nobody exists yet: creates `admin` and returns its full one-time sign-in link."""
        out = self.admin("bootstrap-admin")
        return f"{self.public_url}{out}" if out else None

    def admin_headers(self) -> dict[str, str]:
        """`Authorization` for an admin of this stack (user `stack-admin`, created once) for tests and tools."""
        if self._admin_headers is None:
            try:
                self.create_user("stack-admin", "admin")
            except RuntimeError as exc:
                if "exist" not in str(exc):
                    raise
            self._admin_headers = {"Authorization": f"Bearer {self.api_token('stack-admin')}"}
        return dict(self._admin_headers)

    def start_runner(self, name: str = "runner", state_dir: Path | None = None, extra_env: dict | None = None,
                     prefix: list[str] | None = None) -> Child:
        """A runner for this stack; `prefix` wraps its argv (e.g. `ip netns exec NAME`: a runner on another
        "host"), and extra_env's HOSTBENCH_SERVER then names the address it reaches the API at."""
        state_dir = state_dir or self.state / "runner"
        env = {**self.env(), "HOSTBENCH_SERVER": self.url, "HOSTBENCH_RUNNER_STATE": str(state_dir),
               "HOSTBENCH_KERNEL_BIN": str(ROOT / "runner" / "kernels" / "build" / "hbk"), **(extra_env or {})}
        env.pop("DATABASE_URL", None)  # the runner knows the API only, with its own credential
        env.pop("REDIS_URL", None)
        if self.runner_name and "HOSTBENCH_RUNNER_NAME" not in (extra_env or {}):
            env["HOSTBENCH_RUNNER_NAME"] = self.runner_name
        if not (state_dir / "credential.json").exists():
            env["HOSTBENCH_REGISTRATION_TOKEN"] = self.registration_token()
        return self._child(name, [*(prefix or []), PY, "-m", "hostbench_runner"], ROOT / "runner", env)

    def wait_healthy(self, timeout: float = 60, runners: int = 0) -> dict:
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            for c in self.children.values():
                if not c.alive() and not self.stopping:
                    raise RuntimeError(f"{c.name} exited with {c.proc.returncode if c.proc else '?'}; "
                                       f"log {c.log}:\n{_tail(c.log, 30)}")
            try:
                r = httpx.get(f"{self.url}/api/health", timeout=2)
                last = health = r.json()
                if r.status_code == 200 and health["status"] == "ok" and health["runners_online"] >= runners:
                    return health
            except (httpx.HTTPError, ValueError) as exc:
                last = exc
            time.sleep(0.25)
        raise RuntimeError(f"the system did not become healthy within {timeout:.0f} s: {last}")

    def start(self, timeout: float = 90) -> "Stack":
        self.start_services()
        if not self.migrated:
            self.migrate()
        self.start_api()
        self.start_worker()
        self.wait_healthy(timeout)
        if self.with_runner:
            self.start_runner()
            self.wait_healthy(timeout, runners=1)
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
        order = [n for n in self.children if n.startswith("runner")] + ["beat", "worker", "api"]
        for name in order:
            c = self.children.get(name)
            if c is not None:
                stop_process(c.proc, signal.SIGTERM, timeout=15)
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
