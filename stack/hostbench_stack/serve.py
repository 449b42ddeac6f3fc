"""The API processes under a supervisor of our own, run by hostbench_stack.stack: `python -m hostbench_stack.serve
app.main:app --kind dashboard:8000:2:5 --kind control:8001:2:0 ...` (each kind NAME:PORT:WORKERS:NICE; a single
kind may also be given as `--port N --workers K`; the other options are uvicorn's, the few we use).

It binds and listens on every kind's port first (a connection that comes while the application is still loading
waits in the backlog instead of being refused), imports `app.main` once, and forks each kind's uvicorn servers
sharing that kind's socket: the application is built once for all kinds (the dashboard's and the runners' control
processes differ only by port, worker count and CPU priority), not once per kind or per worker, and a worker
restarted later costs a fork, not an import. A kind with a NICE above 0 yields the CPU: each of its workers starts
a session of its own (its own autogroup, whose nice it raises: see hostbench_stack.stack.yield_cpu) and raises its
own nice. uvicorn's own `--workers` supervisor is not used: it kills a worker that does not answer a ping within
5 s, and on a busy small machine a worker still importing the application was killed over and over (issue 28).
This one never kills a worker for being slow: it restarts one that died, and says so in the log, with its exit
status in words. SIGTERM or SIGINT stops every worker gracefully (uvicorn's --timeout-graceful-shutdown), then
the supervisor exits; a worker whose supervisor died is sent SIGTERM by the kernel (PR_SET_PDEATHSIG)."""
import argparse
import ctypes
import os
import resource
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import NamedTuple

import uvicorn

# exit statuses uvicorn gives (uvicorn.config.STARTUP_FAILURE): the application cannot start; restarting it in a
# loop would fail the same way
STARTUP_FAILURE = 3
RESTARTS_PER_MINUTE = 5
PR_SET_PDEATHSIG = 1


def log(msg: str) -> None:
    print(f"hostbench serve [{os.getpid()}]: {msg}", file=sys.stderr, flush=True)


def exit_words(status: int) -> str:
    """A wait status in words: 'exited with status 1', 'killed by signal 9 (SIGKILL)'."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = "?"
        return f"killed by signal {sig} ({name})"
    return f"exited with status {os.WEXITSTATUS(status)}"


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Kind(NamedTuple):
    name: str
    port: int
    workers: int
    nice: int


def kind(text: str) -> Kind:
    """NAME:PORT:WORKERS:NICE (argparse type)."""
    parts = text.split(":")
    try:
        if len(parts) != 4 or not parts[0]:
            raise ValueError
        k = Kind(parts[0], int(parts[1]), int(parts[2]), int(parts[3]))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME:PORT:WORKERS:NICE") from None
    if not 0 <= k.port <= 65535 or k.workers < 1 or not 0 <= k.nice <= 19:
        raise argparse.ArgumentTypeError(f"{text!r}: port 0-65535, at least 1 worker, nice 0-19")
    return k


def yield_cpu(nice: int) -> None:
    """This process (a worker, just forked) yields the CPU: a session of its own, so an autogroup of its own whose
    nice it raises (with autogroup scheduling, a process's own nice counts only within its group), and its nice
    (without autogroup, that is what counts)."""
    try:
        os.setsid()
        Path("/proc/self/autogroup").write_text(f"{nice}\n")
    except OSError:
        pass  # no autogroup: the nice below does the work
    os.nice(nice)


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m hostbench_stack.serve")
    p.add_argument("app", help="the ASGI application, module:attribute")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--kind", dest="kinds", type=kind, action="append", default=[],
                   help="NAME:PORT:WORKERS:NICE, once per kind of API process")
    p.add_argument("--port", type=int, default=None, help="one kind (named api): its port")
    p.add_argument("--workers", type=int, default=1, help="with --port: its workers")
    p.add_argument("--proxy-headers", dest="proxy_headers", action="store_true", default=False)
    p.add_argument("--no-proxy-headers", dest="proxy_headers", action="store_false")
    p.add_argument("--forwarded-allow-ips", default=None, help="believe X-Forwarded-* from these (uvicorn's)")
    p.add_argument("--no-access-log", dest="access_log", action="store_false", default=True)
    p.add_argument("--timeout-graceful-shutdown", type=int, default=5)
    p.add_argument("--http", default="auto", help="uvicorn's HTTP protocol: auto, h11, httptools or module:Class")
    args = p.parse_args(argv)
    if args.workers < 1:
        p.error("--workers must be at least 1")
    if args.port is not None:
        args.kinds.insert(0, Kind("api", args.port, args.workers, 0))
    if not args.kinds:
        p.error("give --kind NAME:PORT:WORKERS:NICE (or --port)")
    if len({k.name for k in args.kinds}) != len(args.kinds) or len({k.port for k in args.kinds}) != len(args.kinds):
        p.error("each --kind needs its own name and port")
    return args


class Supervisor:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.configs: dict[str, uvicorn.Config] = {}
        self.socks = {}
        for k in args.kinds:
            config = uvicorn.Config(args.app, host=args.host, port=k.port, proxy_headers=args.proxy_headers,
                                    forwarded_allow_ips=args.forwarded_allow_ips, access_log=args.access_log,
                                    timeout_graceful_shutdown=args.timeout_graceful_shutdown, http=args.http)
            self.configs[k.name] = config
            self.socks[k.name] = config.bind_socket()
            self.socks[k.name].listen(config.backlog)
        self.kinds = {k.name: k for k in args.kinds}
        self.workers: dict[int, tuple[str, int]] = {}  # pid -> (kind, slot)
        self.starts: list[float] = []
        self.stopping = False

    def load(self) -> None:
        """Import and build the application once, here, before any fork (a second kind's load finds the module
        imported: it only wraps the application in that kind's middleware)."""
        t0, c0 = time.monotonic(), cpu_s()
        log(f"loading {self.args.app}")
        for config in self.configs.values():
            config.load()
        log(f"loaded {self.args.app} in {cpu_s() - c0:.2f} s CPU ({time.monotonic() - t0:.1f} s wall)")

    def fork(self, name: str, slot: int) -> None:
        k = self.kinds[name]
        pid = os.fork()
        if pid == 0:  # the worker
            code = 1
            try:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                libc = ctypes.CDLL(None, use_errno=True)
                libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
                if k.nice:
                    yield_cpu(k.nice)
                for other, sock in self.socks.items():
                    if other != name:
                        sock.close()  # a worker serves its own kind's port only

                uvicorn.Server(self.configs[name]).run(sockets=[self.socks[name]])
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:  # noqa: BLE001 - printed, then the worker exits non-zero

                traceback.print_exc()
            finally:
                sys.stderr.flush()
                os._exit(code)
        self.workers[pid] = (name, slot)
        self.starts.append(time.monotonic())
        log(f"{name} worker {slot} started (pid {pid}, port {k.port}" + (f", nice {k.nice})" if k.nice else ")"))

    def on_signal(self, signum: int, _frame: object) -> None:
        if not self.stopping:
            self.stopping = True
            log(f"received {signal.Signals(signum).name}: stopping the workers")
            for pid in self.workers:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self.on_signal)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group; SIGTERM is our stop
        self.load()
        for k in self.args.kinds:
            for slot in range(1, k.workers + 1):
                if not self.stopping:
                    self.fork(k.name, slot)
        deadline = None
        while self.workers:
            if self.stopping and deadline is None:
                deadline = time.monotonic() + self.args.timeout_graceful_shutdown + 10
            if deadline is not None and time.monotonic() > deadline:
                for pid in list(self.workers):
                    log(f"worker pid {pid} still running {self.args.timeout_graceful_shutdown + 10} s after "
                        "SIGTERM: SIGKILL")
                    os.kill(pid, signal.SIGKILL)
                deadline = time.monotonic() + 3600
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                time.sleep(0.2)
                continue
            name, slot = self.workers.pop(pid, ("", 0))
            if not slot or self.stopping:
                continue
            log(f"{name} worker {slot} (pid {pid}) {exit_words(status)}")
            if os.WIFEXITED(status) and os.WEXITSTATUS(status) == STARTUP_FAILURE:
                log("the application failed to start (see above); stopping")
                self.on_signal(signal.SIGTERM, None)
                self.stopping = True
                return STARTUP_FAILURE
            now = time.monotonic()
            self.starts = [t for t in self.starts if now - t < 60]
            if len(self.starts) >= RESTARTS_PER_MINUTE * sum(k.workers for k in self.args.kinds):
                log(f"workers died {len(self.starts)} times within a minute; stopping")
                self.on_signal(signal.SIGTERM, None)
                return 1
            self.fork(name, slot)
        log("stopped")
        return 0


def main(argv: list[str] | None = None) -> int:
    return Supervisor(parse(sys.argv[1:] if argv is None else argv)).run()


if __name__ == "__main__":
    sys.exit(main())
