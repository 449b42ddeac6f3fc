"""Waiting for a starting process by its progress, not by a stopwatch (issue 28).

A process that is starting is waited for as long as it is alive and making progress: it used CPU time (itself or
any process it started) or wrote to its log since the last look. It fails only when it died, or made no progress
for HOSTBENCH_START_STALL_S seconds. On a small, busy machine an import can take minutes of wall time while using
only seconds of CPU; that is slow, not stuck. A process is ready when its log shows the line it writes once it
serves (READY_MARKS); from then on it need not make progress (an idle server uses no CPU)."""
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hostbench_stack import settings

STALL_SETTING = settings.env_name("start_stall_s")  # HOSTBENCH_START_STALL_S, its default in hostbench_stack.settings
# The line each kind of process writes once it serves (first word of the child's name -> bytes in its log).
READY_MARKS = {
    "api": b"Application startup complete",  # uvicorn, in each worker of hostbench_stack.serve
    "control": b"Application startup complete",
    "worker": b" ready.",  # celery: "worker-8000@host ready."
    "beat": b"beat: Starting",
    "runner": b"runner ready:",  # hostbench_runner.daemon, once registered
}
TAIL_LINES = 15


def stall_s() -> float:
    """HOSTBENCH_START_STALL_S: how long a starting process may go without any progress before start-up fails."""
    try:
        return settings.load().start_stall_s
    except settings.SettingError as exc:
        raise RuntimeError(str(exc)) from None


def tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of `pid` and every process under it, the children it already reaped included."""
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        stats[int(entry.name)] = fields
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        f = stats.get(p)
        if f is None:
            continue
        # fields after the name: state ppid ... utime(11) stime(12) cutime(13) cstime(14)
        total += sum(int(x) for x in f[11:15]) / tick
        todo.extend(children.get(p, []))
    return total


def exit_words(returncode: int | None) -> str:
    """Popen's returncode in words."""
    if returncode is None:
        return "is still running"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "?"
        why = (" (not by hostbench: the kernel's out-of-memory killer, or a person; see `dmesg`)"
               if -returncode == signal.SIGKILL else "")
        return f"was killed by signal {-returncode} ({name}){why}"
    return f"exited with status {returncode}"


def tail(path: Path, n: int = TAIL_LINES, since: int = 0) -> str:
    """The last `n` lines of a log (of what was written from byte `since` on), indented."""
    try:
        with open(path, "rb") as f:
            f.seek(since)
            text = f.read().decode(errors="replace")
    except OSError:
        return "    (no log)"
    lines = [ln for ln in text.splitlines() if ln.strip()][-n:]
    return "\n".join(f"    {ln}" for ln in lines) or "    (the log is empty)"


@dataclass
class Watched:
    """One starting process as the wait sees it."""
    name: str
    pid: int
    log: Path
    log_from: int  # the log's size when this start began: readiness and tails count from here
    cpu: float = 0.0
    log_size: int = 0
    last_progress: float = field(default_factory=time.monotonic)
    ready: bool = False

    def look(self, now: float) -> None:
        """Sample CPU time and log size; progress when either moved; ready when the log shows its mark."""
        try:
            size = self.log.stat().st_size
        except OSError:
            size = 0
        cpu = tree_cpu_s(self.pid)
        if cpu > self.cpu + 0.005 or size != self.log_size:
            self.last_progress = now
        self.cpu, self.log_size = max(cpu, self.cpu), size
        mark = READY_MARKS.get(self.name.split("-")[0])
        if not self.ready and mark is not None and size > self.log_from:
            try:
                with open(self.log, "rb") as f:
                    f.seek(self.log_from)
                    self.ready = mark in f.read()
            except OSError:
                pass

    def stalled(self, now: float, limit: float) -> bool:
        return not self.ready and now - self.last_progress > limit

    def stall_message(self, limit: float) -> str:
        return (f"{self.name} (pid {self.pid}) made no progress for {limit:.0f} s ({STALL_SETTING}): it is alive but "
                f"used no CPU and wrote nothing to its log in that time, and it is not serving yet.\n"
                f"log {self.log}, last lines:\n{tail(self.log, since=self.log_from)}")


def died_message(name: str, pid: int, returncode: int | None, log: Path, log_from: int = 0) -> str:
    return (f"{name} (pid {pid}) {exit_words(returncode)} while the system was starting.\n"
            f"log {log}, last lines:\n{tail(log, since=log_from)}")


def status_line(watched: list[Watched], t0: float, now: float) -> str:
    def one(w: Watched) -> str:
        quiet = now - w.last_progress
        return f"{w.name} ({w.cpu:.1f} s CPU{f', no progress for {quiet:.0f} s' if quiet >= 10 else ''})"

    waiting = [one(w) for w in watched if not w.ready]
    ready = [w.name for w in watched if w.ready]
    return (f"starting for {now - t0:.0f} s; waiting for {', '.join(waiting) or 'the health check'}"
            + (f"; ready: {', '.join(ready)}" if ready else ""))


Report = Callable[[str], None]
