"""Is PostgreSQL answering right now? One watcher thread per API process asks it `SELECT 1` every PROBE_S on a
connection of its own, and the answer is read without touching the database.

A stopped PostgreSQL refuses connections, and the pool's errors say so at once (app.core.errors: 503). A *hung*
one (SIGSTOP, a full disk, a storage stall) refuses nothing: the kernel still accepts connections and every
query simply never returns, so the request that sent it would wait as long as the hang lasts, holding its slot,
its thread and its pooled connection. The watcher sees such a hang within STALL_S: its own probe has been out
that long. From then on requests that need the database are refused at once with 503, Retry-After and
`X-Hostbench-Unavailable: database` (app.core.admission), which is what lets a runner keep measuring through
the outage (docs/reliability.md, rules 4 and 12), and /api/health says for how long. The probe that hung
returns when PostgreSQL does, and the watcher says ok again at its next answer."""
import logging
import threading
import time
from dataclasses import dataclass

import psycopg

from app.core.config import get_settings

log = logging.getLogger("hostbench.dbwatch")
# A runner renewing a 3-s lease every second waits about 1 s for an answer (its fence is at 2 s): a hang must be
# seen, and answered, well inside that. `SELECT 1` answers in a millisecond; a process starved of CPU, where a
# probe can look slow for that reason alone, is not judged (app.core.admission.database_hung).
PROBE_S = 0.2  # how often the watcher asks
STALL_S = 0.5  # a probe out this long means PostgreSQL is not answering
CONNECT_TIMEOUT_S = 2  # libpq's connect_timeout for the watcher's own connection


@dataclass(frozen=True)
class DbState:
    ok: bool
    detail: str  # "ok", "not answering for 7 s", "unreachable: OperationalError"
    since_s: float  # how long it has not been ok (0 when ok)
    hung: bool = False  # connected, but a query has been out STALL_S or longer


def _libpq_url(url: str) -> str:
    """The SQLAlchemy URL as libpq takes it (postgresql+psycopg:// → postgresql://)."""
    scheme, rest = url.split("://", 1)
    return f"{scheme.split('+', 1)[0]}://{rest}"


class DbWatch:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._probe_started: float | None = None  # monotonic time the probe now out was sent; None when none is
        self._last_ok = time.monotonic()
        self._error: str | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the watcher (once per process; app.reconciler's lifespan calls it)."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._thread = threading.Thread(target=self._run, name="hostbench-dbwatch", daemon=True)
            self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def state(self) -> DbState:
        now = time.monotonic()
        with self._lock:
            started, error, last_ok = self._probe_started, self._error, self._last_ok
        if started is not None and now - started >= STALL_S:
            return DbState(False, f"not answering for {now - started:.0f} s", now - started, hung=True)
        if error is not None:
            return DbState(False, f"unreachable: {error}", now - last_ok)
        return DbState(True, "ok", 0.0)

    def _run(self) -> None:
        conn: psycopg.Connection | None = None
        url = _libpq_url(get_settings().database_url)
        while True:
            with self._lock:
                self._probe_started = time.monotonic()
            try:
                if conn is None or conn.closed:
                    conn = psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True,
                                           application_name="hostbench-dbwatch")
                conn.execute("SELECT 1")
                with self._lock:
                    if self._error is not None or time.monotonic() - self._probe_started >= STALL_S:
                        log.info("PostgreSQL answers again")
                    self._error, self._last_ok = None, time.monotonic()
            except Exception as exc:  # noqa: BLE001 - the watcher reports, never dies
                with self._lock:
                    if self._error is None:
                        log.warning("PostgreSQL unreachable: %s: %s", type(exc).__name__, str(exc)[:200])
                    self._error = type(exc).__name__
                if conn is not None:
                    try:
                        conn.close()
                    except Exception:  # noqa: BLE001, S110
                        pass
                    conn = None
            finally:
                with self._lock:
                    self._probe_started = None
            time.sleep(PROBE_S)


DB_WATCH = DbWatch()
