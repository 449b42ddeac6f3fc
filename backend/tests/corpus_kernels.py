"""Real kernels under real injected conditions, for the verdict corpus (test_verdict_corpus.py): busy processes
beside a kernel, a file on tmpfs, a warm page cache, and two network namespaces joined by a veth (a second "host"
on the same machine), shaped with tc or with a receiver starved of CPU."""
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HBK = Path(__file__).resolve().parents[2] / "runner" / "kernels" / "build" / "hbk"
HOG = [sys.executable, "-c", "while True: pass"]


def need_kernel() -> None:
    if not HBK.exists():
        pytest.fail(f"kernel not built ({HBK}): run `make -C runner/kernels` (./hostbench test does)")


@contextlib.contextmanager
def hogs(n: int, cpu: int | None = None) -> Iterator[None]:
    """n busy processes (on one CPU when cpu is given), ended when the block ends."""
    argv = (["taskset", "-c", str(cpu)] if cpu is not None else []) + HOG
    procs = [subprocess.Popen(argv) for _ in range(n)]
    try:
        time.sleep(0.3)
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def events(out: str) -> tuple[dict, list[dict]]:
    """The start event and the result lines of a kernel's output, as a runner uploads them."""
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    start = next(e for e in lines if e["type"] == "start")
    return start, [{k: v for k, v in e.items() if k not in ("v", "type", "t")} for e in lines if e["type"] == "result"]


def kernel(*args: str, prefix: tuple[str, ...] = ()) -> tuple[dict, list[dict]]:
    out = subprocess.run([*prefix, str(HBK), *args], capture_output=True, text=True, timeout=120, check=True).stdout
    return events(out)


def netns_possible() -> bool:
    return os.geteuid() == 0 and shutil.which("ip") is not None and shutil.which("tc") is not None


class NetnsPair:
    """Two network namespaces joined by a veth: `a` (the server, 10.213.x.1) and `b` (the driver, .2)."""

    def __init__(self) -> None:
        tag = f"{os.getpid() % 100000}"
        self.a, self.b = f"hbva{tag}", f"hbvb{tag}"
        self.net = f"10.{213 + os.getpid() % 40}.{os.getpid() % 250}"
        self.server_ip = f"{self.net}.1"

    def _ip(self, *args: str) -> None:
        subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)

    def __enter__(self) -> "NetnsPair":
        self._ip("netns", "add", self.a)
        self._ip("netns", "add", self.b)
        self._ip("link", "add", f"{self.a}x", "type", "veth", "peer", "name", f"{self.b}x")
        for ns, addr in ((self.a, f"{self.net}.1"), (self.b, f"{self.net}.2")):
            self._ip("link", "set", f"{ns}x", "netns", ns)
            self._ip("-n", ns, "addr", "add", f"{addr}/24", "dev", f"{ns}x")
            self._ip("-n", ns, "link", "set", f"{ns}x", "up")
            self._ip("-n", ns, "link", "set", "lo", "up")
        return self

    def __exit__(self, *exc: object) -> None:
        for ns in (self.a, self.b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=10)

    def shape(self, rate: str) -> None:
        """A token bucket on the driver's side of the link (tc tbf): the link carries at most `rate`."""
        subprocess.run(["tc", "-n", self.b, "qdisc", "add", "dev", f"{self.b}x", "root", "tbf", "rate", rate,
                        "burst", "32kbit", "latency", "50ms"], check=True, capture_output=True, timeout=10)

    @contextlib.contextmanager
    def server(self, op: str, nice: int = 0, cpu: int | None = None) -> Iterator[int]:
        """A serving kernel in namespace a (niced, on one CPU when asked); yields its port."""
        argv = ["ip", "netns", "exec", self.a, "nice", "-n", str(nice), str(HBK), "net", "--role", "serve",
                "--bind", self.server_ip, "--port", "0", "--op", op, "--serve_s", "60"]
        if cpu is not None:
            argv += ["--server_cpu", str(cpu)]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                if '"listening"' in line:
                    yield int(json.loads(line)["port"])
                    break
            else:
                pytest.fail("the serving kernel never listened")
        finally:
            proc.terminate()
            proc.wait(10)

    def drive(self, port: int, *args: str, cpu: int | None = None) -> tuple[dict, list[dict]]:
        prefix = ("ip", "netns", "exec", self.b) + (("taskset", "-c", str(cpu)) if cpu is not None else ())
        return kernel("net", "--role", "drive", "--peer", self.server_ip, "--port", str(port), *args, prefix=prefix)
