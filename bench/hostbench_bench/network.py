"""bench network: our net kernel beside iperf3 and sockperf over loopback, same placement.

- TCP, 1 stream, 128 KiB writes, `tcp_1stream`: `hbk net --op tcp_stream` against
  `iperf3 -c -l 131072 -A 0,1`; both sides count what the *receiver* got (iperf3's
  `sum_received`, our receiver's byte count), over the same duration after a 1-s warm-up
  (iperf3 -O 1).
- UDP, 32 KiB datagrams, unthrottled, `udp_32k`: `hbk net --op udp_stream --sizes 32768`
  against `iperf3 -u -b 0 -l 32768 -A 0,1`; the receiver's goodput on both sides (datagrams that
  arrived x size / time); sender rate and loss % are noted beside it. No -O here: iperf3 3.x
  miscounts UDP loss when it omits the first interval (it printed 164 % loss), and UDP has no
  slow start to skip. Our receiver keeps a 4 MiB socket buffer by default and iperf3 its OS default
  (~208 KiB), so `udp_32k_4mib_buffers` repeats the pairs with 4 MiB on both (ours --sockbuf_kib
  4096, iperf3 -w 4M): the kernel's own speed with the buffers equal.
- TCP round-trip latency, 64-byte ping-pong, p50, in three placements and modes: both ends on
  one vCPU (blocking), across vCPUs (blocking), across vCPUs busy-polling (our --poll busy, sockperf
  --nonblocked on both ends, which spins on recv). sockperf runs pinned with taskset like ours and
  with --full-rtt, so both numbers are full round trips (sockperf's default output is half of it).
  The ratio is ours/sockperf: below 1 means our round trip is shorter. The same over UDP
  (`udp_rtt_p50_*`, sockperf's default protocol) goes beyond the issue's bar, which is TCP: there
  our sockets are connected on both ends while sockperf's server answers with sendto() to an
  address (a route lookup per reply), so ours is typically 5-10 % shorter.

Client on CPU 0 and server on CPU 1 ("across"), or both on CPU 0 ("same"): the two tools get the
same placement in every pair. The iperf3 and sockperf servers are started by this command on a
free loopback port and stopped at the end. Nothing is installed; a missing tool is reported as
missing and its pairs are skipped.
"""
import contextlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time

from hostbench_common.reftools import iperf3, sockperf
from hostbench_common.reftools.engine import free_port
from hostbench_common.reftools.iperf3 import server_argv

from hostbench_bench.common import HBK, BenchReport, ToolMissing, figure, interleave, parsed, resolve, results
from hostbench_bench.common import run as run_cmd

DURATION = 5       # seconds per measurement (after a 1-s warm-up on both sides)
RTT_DURATION = 3
TCP_SIZE = 131072  # iperf3's default TCP write size
UDP_SIZE = 32768
RTT_SIZE = 64
REFUSED_S = 10  # how long an iperf3 client retries a refused connection (its server listening again)
PLACEMENTS = (      # protocol, metric suffix, client CPU, server CPU, busy poll
    ("tcp", "same_vcpu", 0, 0, False),
    ("tcp", "across_vcpus", 0, 1, False),
    ("tcp", "across_busy", 0, 1, True),
    ("udp", "same_vcpu", 0, 0, False),
    ("udp", "across_vcpus", 0, 1, False),
)


class Server:
    """A reference tool's server on a free loopback port, pinned; stopped on exit."""

    def __init__(self, argv_for_port, ready_line: str | None = None, connect_probe: bool = False,
                 settle: float = 0):
        self.port = free_port()
        self.proc = subprocess.Popen(argv_for_port(self.port), stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None  # stdout=PIPE
        deadline = time.time() + 10
        seen = ""
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{argv_for_port(self.port)[0]} server exited: {self.proc.stdout.read()[-400:]}")
            if ready_line:
                line = self.proc.stdout.readline()
                seen += line
                if ready_line in line:
                    time.sleep(settle)
                    return
            elif connect_probe:
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                    return
                except OSError:
                    time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"reference server did not come up on port {self.port}: {seen[-300:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Ours:
    """Runs a private copy of hbk, taken once: a rebuild of runner/kernels/build during the bench (other
    work on the same tree) cannot remove the binary or mix two builds in one report."""

    def __init__(self) -> None:
        self.last: dict = {}
        self.min_cpu_share = 1.0
        fd, self.exe = tempfile.mkstemp(prefix="hbk-bench-")
        os.close(fd)
        shutil.copyfile(HBK, self.exe)
        os.chmod(self.exe, 0o755)  # noqa: S103 - a private copy of the kernel binary: it has to be executable

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.exe)

    def net(self, args: list[str]) -> dict:
        out = run_cmd([self.exe, "net", "--repeats", "1", "--warmup_s", "1", *args], timeout=300)
        events = [json.loads(line) for line in out.splitlines() if line.strip()]
        end = events[-1] if events else {}
        if end.get("type") != "end" or end.get("status") != "ok":
            raise RuntimeError(f"hbk net {' '.join(args)} did not end ok: {end}")
        res = results(events)
        if len(res) != 1 or not res[0]["verified"]:
            raise RuntimeError(f"hbk net {' '.join(args)}: no verified result: {res}")
        self.last = res[0]
        self.min_cpu_share = min(self.min_cpu_share, res[0]["cpu_share"])
        return res[0]


def iperf3_metrics(port: int, duration: int, size: int, udp: bool = False, omit_s: int = 0,
                   extra: tuple[str, ...] = ()) -> list[dict]:
    """One iperf3 client run against our loopback server, pinned as our kernel (client CPU 0, server CPU 1):
    the runner's argv and parser (received_mbps: the receiver's sum / 1e6)."""
    argv = resolve(iperf3.client_argv("127.0.0.1", port, duration, size, udp=udp, omit_s=omit_s, pin=(0, 1),
                                      extra=extra))
    # iperf3's server listens afresh after each test: a client started right after the previous one (two
    # iperf3 runs in a row, as pairs B A follow A B) can find nothing listening for a moment. A refused
    # connection measured nothing, so it is tried again, for up to REFUSED_S seconds.
    deadline = time.monotonic() + REFUSED_S
    while True:
        try:
            return parsed(iperf3.parse_received_mbps, run_cmd(argv, timeout=120), "iperf3")
        except RuntimeError as exc:
            if "Connection refused" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.25)


def run(pairs: int) -> BenchReport:
    report = BenchReport("network")
    if not HBK.exists():
        raise ToolMissing(f"{HBK} is not built (make -C runner/kernels)")
    if len(os.sched_getaffinity(0)) < 2 or not {0, 1} <= os.sched_getaffinity(0):
        report.notes.append("fewer than two CPUs (0 and 1) in the affinity mask: the across-vCPU pairs "
                            "run where the OS puts them")
    ours = Ours()
    try:
        return pairs_of(report, ours, pairs)
    finally:
        ours.close()


def pairs_of(report: BenchReport, ours: Ours, pairs: int) -> BenchReport:
    iperf3, sockperf, taskset = shutil.which("iperf3"), shutil.which("sockperf"), shutil.which("taskset")
    if iperf3 is None:
        report.missing.append("iperf3: the TCP and UDP throughput pairs were not run")
    if sockperf is None or taskset is None:
        report.missing.append("sockperf" if sockperf is None else "taskset (util-linux)")
        report.notes.append("the round-trip pairs need sockperf and taskset: not run")

    if iperf3:
        udp_notes: list[str] = []

        with Server(lambda p: resolve(server_argv("127.0.0.1", p, extra=("--forceflush",))),
                    ready_line="Server listening") as srv:
            def ours_tcp() -> float:
                return ours.net(["--op", "tcp_stream", "--sizes", str(TCP_SIZE), "--streams", "1",
                                 "--client_cpu", "0", "--server_cpu", "1", "--duration_s", str(DURATION)])["value"]

            def iperf_tcp() -> float:
                return figure(iperf3_metrics(srv.port, DURATION, TCP_SIZE, omit_s=1), "received_mbps", "iperf3")

            interleave(report, "tcp_1stream", "Mbit/s",
                       f"iperf3 -l {TCP_SIZE} -t {DURATION} -O 1 -A 0,1, receiver (sum_received)",
                       ours_tcp, iperf_tcp, pairs)

            for metric, ours_buf, their_buf in (("udp_32k", [], []),
                                                 ("udp_32k_4mib_buffers", ["--sockbuf_kib", "4096"], ["-w", "4M"])):
                udp_pairs(report, ours, srv.port, metric, ours_buf, their_buf, pairs, udp_notes)
        report.notes.append("udp per run, in order: " + "; ".join(udp_notes))

    if sockperf and taskset:
        for proto, name, ccpu, scpu, busy in PLACEMENTS:
            rtt_pairs(report, ours, proto, name, ccpu, scpu, busy, pairs)
        report.notes.append("rtt ratios are ours/sockperf of the full round-trip p50 (not half): "
                            "within 10 % means 0.90..1.10")
    report.notes.append(f"lowest cpu_share of our client threads: {ours.min_cpu_share:.2f} "
                        "(1.0 = never waited for a CPU; a shared host shows lower)")
    report.notes.append(f"load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    return report


def udp_pairs(report: BenchReport, ours: Ours, port: int, metric: str, ours_buf: list[str],
              their_buf: list[str], pairs: int, notes: list[str]) -> None:
    def ours_udp() -> float:
        r = ours.net(["--op", "udp_stream", "--sizes", str(UDP_SIZE), "--streams", "1", "--client_cpu", "0",
                      "--server_cpu", "1", "--duration_s", str(DURATION), *ours_buf])
        notes.append(f"{metric} ours: sender {r['sender_mbit_s']:.0f} Mbit/s, loss {r['loss_pct']:.2f} %")
        return r["value"]

    def iperf_udp() -> float:
        got = iperf3_metrics(port, DURATION, UDP_SIZE, udp=True, extra=tuple(their_buf))
        sent = figure(got, "sent_bps", "iperf3", stream=None)
        notes.append(f"{metric} iperf3: sender {sent / 1e6:.0f} Mbit/s, "
                     f"loss {figure(got, 'lost_percent', 'iperf3', stream=None):.2f} %")
        return figure(got, "received_mbps", "iperf3")

    ref = f"iperf3 -u -b 0 -l {UDP_SIZE} -t {DURATION} -A 0,1{' ' if their_buf else ''}{' '.join(their_buf)}, " \
          "receiver (sum_received)"
    if ours_buf:
        ref += f"; ours {' '.join(ours_buf)}"
    interleave(report, metric, "Mbit/s", ref, ours_udp, iperf_udp, pairs)


def rtt_pairs(report: BenchReport, ours: Ours, proto: str, name: str, ccpu: int, scpu: int, busy: bool,
              pairs: int) -> None:
    tcp = proto == "tcp"  # sockperf's default is UDP
    with Server(lambda p: resolve(sockperf.server_argv("127.0.0.1", p, tcp, busy, cpu=scpu), "sockperf"),
                ready_line=None if tcp else "sockperf: Warmup stage",
                connect_probe=bool(tcp), settle=0 if tcp else 0.5) as srv:
        def ours_rtt() -> float:
            r = ours.net(["--op", f"{proto}_rr", "--sizes", str(RTT_SIZE), "--client_cpu", str(ccpu),
                          "--server_cpu", str(scpu), "--poll", "busy" if busy else "blocking",
                          "--duration_s", str(RTT_DURATION)])
            return r["latency_us"]["p50"]

        def sockperf_rtt() -> float:
            # the full round trip's p50 in µs (the parser refuses a one-way report: --full-rtt)
            argv = sockperf.client_argv("127.0.0.1", srv.port, RTT_SIZE, RTT_DURATION, tcp, busy, cpu=ccpu)
            out = run_cmd(resolve(argv, "sockperf"), timeout=120)
            return figure(parsed(sockperf.parse_rr, out, "sockperf"), "latency_p50", "sockperf")

        interleave(report, f"rtt_p50_{name}" if tcp else f"udp_rtt_p50_{name}", "µs",
                   f"sockperf pp{' --tcp' if tcp else ''} -m {RTT_SIZE} --full-rtt{' --nonblocked' if busy else ''}, "
                   f"client CPU {ccpu}, server CPU {scpu}; lower is better",
                   ours_rtt, sockperf_rtt, pairs)
