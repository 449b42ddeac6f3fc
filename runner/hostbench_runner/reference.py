"""Reference tools within a job: after our kernel succeeded, run the classic tool for the same
experiment on the same host with matched parameters, parse its output with `reftools`, and report
it in the finish payload under `references` (docs/api.md).

    REFERENCES: experiment -> builders; a builder turns (kernel params, kernel facts, host) into Plans.

A Plan is data: an argv list (never a shell), extra environment, input files, where the output
lands and which parser reads it. `ReferencePhase` runs the plans one at a time in a fresh directory
under the run's work directory, each bounded by its own timeout and by the run's deadline, and the
daemon's loop drives it (one `step` per loop turn, so a cancel or a shutdown stops the tool at once).

Each plan ends as one entry: {"tool", "status": "ok"|"unavailable"|"failed", "reason", "argv",
"matches": {"op", "threads", "block_bytes"}, "metrics"}. A tool that is not installed is
"unavailable", never an error of the run.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import math
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import reference_likwid, reference_net
from .kernel import _child_setup, describe_exit, kernel_env
from .reftools import Metric, ParseError, parse_text

log = logging.getLogger("hostbench.reference")

MAX_OUTPUT_BYTES = 64 * 1024 * 1024  # larger than any report: a runaway tool is stopped
MAX_REFERENCES = 100  # the API takes at most 100 per finish
MIN_TIME_S = 3.0  # a tool given less time than this is not started
FINISH_MARGIN_S = 2.0  # left before the run's deadline for the finish itself
KILL_GRACE_S = 3.0
SERVER_READY_S = 5.0  # a reference tool's own server must listen within this
PORT = "{port}"  # in a plan's argv and server_argv: the free loopback port chosen when it starts
STDERR_TAIL = 600


# --- the plan of one reference run ----------------------------------------------------------------

Parser = Callable[[str], list[Metric]]


@dataclass(frozen=True)
class Plan:
    tool: str  # the name reported ("hpcc", "likwid-bench", "stream", "fio")
    argv: tuple[str, ...]  # argv[0] and every name in `needs` are resolved on PATH at run time
    matches: Mapping[str, Any]  # our kernel's row: op, threads, block_bytes
    parser: str | Parser  # a reftools tool name, or a parser of our own
    needs: tuple[str, ...] = ()  # executables besides argv[0] (hpcc needs mpirun)
    env: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)  # written into the tool's directory first
    output: str | None = None  # a file the tool writes in its directory; None = its stdout
    timeout_s: float = 120.0
    primary: str | None = None  # the metric that matches our kernel's figure: listed first
    # A server of the tool's own (iperf3 -s, sockperf sr), started in the same directory before argv on a
    # free loopback port (PORT in either argv), awaited until it listens (tcp) or is bound (udp), and
    # stopped after the client (SIGTERM, SIGKILL after the grace). Empty: no server.
    server_argv: tuple[str, ...] = ()
    server_proto: str = "tcp"
    # Why this plan cannot run (a two-host job whose peer offered no server for the tool): reported as
    # "unavailable" with this reason, nothing is started.
    unavailable: str | None = None


@dataclass
class Context:
    """What a builder may use: the kernel's complete parameters, its start and result events, the host."""

    experiment: str
    params: Mapping[str, Any]
    start: Mapping[str, Any] | None = None
    results: Sequence[Mapping[str, Any]] = field(default_factory=list)
    inventory: Mapping[str, Any] | None = None
    cpus: int = 1
    mem_bytes: int | None = None
    is_root: bool = False
    # network_drive: the ports of the reference servers the peer's serve run offers ({"iperf3": 5201}), from
    # the server's own records (the assignment), never from the job's parameters.
    reference_ports: Mapping[str, int] = field(default_factory=dict)


Builder = Callable[[Context], list[Plan]]


def entry(tool: str, status: str, reason: str | None, argv: list[str], matches: Mapping[str, Any],
          metrics: list[Metric] | None = None) -> dict[str, Any]:
    return {
        "tool": tool, "status": status, "reason": reason, "argv": list(argv),
        "matches": {"op": matches.get("op"), "threads": matches.get("threads"),
                    "block_bytes": matches.get("block_bytes")},
        "metrics": metrics or [],
    }


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _op(ctx: Context) -> str | None:
    op = ctx.params.get("op")
    return op if isinstance(op, str) else None


# --- CPU: hpcc's HPL ----------------------------------------------------------------------------------

HPL_NB = 192
HPL_TARGET_S = 60.0  # HPL's own time at the measured peak
HPL_N_MIN, HPL_N_MAX = 2000, 20000
HPL_MEM_SHARE = 0.25  # of RAM for the matrix
# hpcc sizes its other tests (RandomAccess, STREAM, FFT, PTRANS) from each process's share of the HPL
# matrix, and on a small host they take far longer than HPL (a busy 2-vCPU VM: N=6912 on 2 processes
# ran 215 s, HPL 12 s of it; N=4992 on 1 process 70 s; N=3840 on 1 process 37 s). This bound per CPU
# keeps a whole hpcc run near a minute there and still gives a large host N=20000.
HPCC_MATRIX_PER_CPU = 128 << 20
HPCC_TIMEOUT_S = 600.0
DEFAULT_GFLOPS_PER_THREAD = 10.0  # only to size N when the kernel gave no fp64 figure


def measured_gflops(ctx: Context, threads: int) -> float | None:
    """Our kernel's best FP64 figure at this thread count (FP32 halved when the run was FP32)."""
    values = []
    for r in ctx.results:
        if r.get("threads") != threads or not isinstance(r.get("value"), (int, float)):
            continue
        op = r.get("op") or ctx.params.get("op")
        if op == "fp64":
            values.append(float(r["value"]))
        elif op == "fp32":
            values.append(float(r["value"]) / 2)
    return max(values) if values else None


def hpl_problem_size(peak_gflops: float, mem_bytes: int | None, procs: int, cpus: int) -> int:
    """N for HPL: about HPL_TARGET_S at the peak (2/3 N^3 flops), the matrix (8 N^2 bytes) within
    a quarter of RAM and HPCC_MATRIX_PER_CPU per CPU in use, bounded 2000..20000, a multiple of NB."""
    n = (1.5 * peak_gflops * 1e9 * HPL_TARGET_S) ** (1 / 3)
    n = min(n, math.sqrt(HPCC_MATRIX_PER_CPU * max(1, min(procs, cpus)) / 8))
    n = min(max(n, HPL_N_MIN), HPL_N_MAX)
    if mem_bytes:
        n = min(n, math.sqrt(HPL_MEM_SHARE * mem_bytes / 8))  # a small host: below 2000 rather than swap
    n = int(n)
    return max(HPL_NB, n - n % HPL_NB)


def hpcc_input(n: int, nb: int, p: int, q: int) -> str:
    """hpccinf.txt: HPL's input format (one N, one NB, one P x Q grid), then hpcc's PTRANS lines
    (no extra sizes: PTRANS takes N/2 from HPL)."""
    rows = [
        ("HPLinpack benchmark input file", None),
        ("hostbench reference run", None),
        ("HPL.out", "output file name (if any)"),
        ("8", "device out (6=stdout,7=stderr,file)"),
        ("1", "# of problems sizes (N)"),
        (str(n), "Ns"),
        ("1", "# of NBs"),
        (str(nb), "NBs"),
        ("0", "PMAP process mapping (0=Row-,1=Column-major)"),
        ("1", "# of process grids (P x Q)"),
        (str(p), "Ps"),
        (str(q), "Qs"),
        ("16.0", "threshold"),
        ("1", "# of panel fact"),
        ("2", "PFACTs (0=left, 1=Crout, 2=Right)"),
        ("1", "# of recursive stopping criterium"),
        ("4", "NBMINs (>= 1)"),
        ("1", "# of panels in recursion"),
        ("2", "NDIVs"),
        ("1", "# of recursive panel fact."),
        ("1", "RFACTs (0=left, 1=Crout, 2=Right)"),
        ("1", "# of broadcast"),
        ("1", "BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)"),
        ("1", "# of lookahead depth"),
        ("1", "DEPTHs (>=0)"),
        ("2", "SWAP (0=bin-exch,1=long,2=mix)"),
        ("64", "swapping threshold"),
        ("0", "L1 in (0=transposed,1=no-transposed) form"),
        ("0", "U  in (0=transposed,1=no-transposed) form"),
        ("1", "Equilibration (0=no,1=yes)"),
        ("8", "memory alignment in double (> 0)"),
        ("##### This line (no. 32) is ignored (it serves as a separator). ######", None),
        ("0", "Number of additional problem sizes for PTRANS"),
        ("0", "values of N"),
        ("0", "number of additional blocking sizes for PTRANS"),
        ("0", "values of NB"),
    ]
    return "".join(f"{value:<13s}{label}\n" if label else f"{value}\n" for value, label in rows)


def hpcc_hpl(ctx: Context) -> list[Plan]:
    if _op(ctx) != "fp64":
        return []
    plans = []
    for threads in _list(ctx.params.get("threads")):
        peak = measured_gflops(ctx, threads) or DEFAULT_GFLOPS_PER_THREAD * threads
        n = hpl_problem_size(peak, ctx.mem_bytes, threads, ctx.cpus)
        argv = ["mpirun"] + (["--allow-run-as-root"] if ctx.is_root else []) + [
            "--oversubscribe", "-np", str(threads), "hpcc"]
        plans.append(Plan(
            tool="hpcc", argv=tuple(argv), needs=("hpcc",), parser="hpcc", output="hpccoutf.txt",
            matches={"op": "fp64", "threads": threads, "block_bytes": None},
            # one process per thread, each single-threaded: the BLAS must not start threads of its own
            env={"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
            files={"hpccinf.txt": hpcc_input(n, HPL_NB, 1, threads)},
            timeout_s=HPCC_TIMEOUT_S, primary="hpl_gflops",
        ))
    return plans


# --- CPU: likwid-bench peakflops ------------------------------------------------------------------------

# Our CPU kernel's ISA names -> likwid-bench's test suffix (peakflops[_sp]<suffix>).
LIKWID_ISA = {"avx512": "_avx512_fma", "avx2": "_avx_fma", "sse2": "_sse", "scalar": ""}
LIKWID_TIMEOUT_S = 120.0


def likwid_isa(ctx: Context) -> str:
    """The ISA our kernel ran (its start event), else the host's best."""
    isa = (ctx.start or {}).get("isa")
    if isa not in LIKWID_ISA:
        isa = ((ctx.inventory or {}).get("cpu") or {}).get("best_isa")
    return isa if isa in LIKWID_ISA else "scalar"


def likwid_peakflops(ctx: Context) -> list[Plan]:
    op = _op(ctx)
    if op not in ("fp64", "fp32"):
        return []
    test = ("peakflops" if op == "fp64" else "peakflops_sp") + LIKWID_ISA[likwid_isa(ctx)]
    plans = []
    for threads in _list(ctx.params.get("threads")):
        # N: the whole node as one domain; 16 kB per thread stays in L1, so the FMA units are the limit.
        argv = ("likwid-bench", "-t", test, "-W", f"N:{16 * threads}kB:{threads}")
        plans.append(Plan(tool="likwid-bench", argv=argv, parser=reference_likwid.parse,
                          matches={"op": op, "threads": threads, "block_bytes": None},
                          timeout_s=LIKWID_TIMEOUT_S, primary="peakflops"))
    return plans


# --- memory: STREAM (for the memory experiment to come) ---------------------------------------------------

STREAM_OPS = {"stream_copy": "copy", "stream_scale": "scale", "stream_add": "add", "stream_triad": "triad",
              "stream_copy_nt": "copy", "stream_scale_nt": "scale", "stream_add_nt": "add",
              "stream_triad_nt": "triad"}
STREAM_TIMEOUT_S = 300.0


def stream(ctx: Context) -> list[Plan]:
    """McCalpin's `stream` binary on PATH, OpenMP threads = our thread count. Its array size is fixed
    when it is compiled (STREAM_ARRAY_SIZE), so only op and threads match; the parser reports it."""
    op = _op(ctx)
    if op not in STREAM_OPS:
        return []
    return [Plan(tool="stream", argv=("stream",), parser="stream",
                 matches={"op": op, "threads": threads, "block_bytes": None},
                 env={"OMP_NUM_THREADS": str(threads), "OMP_PROC_BIND": "spread", "OMP_PLACES": "cores"},
                 timeout_s=STREAM_TIMEOUT_S, primary=STREAM_OPS[op])
            for threads in _list(ctx.params.get("threads"))]


# --- disk: fio (for the disk experiment to come) ----------------------------------------------------------

FIO_RW = {"rw": "rw", "seq_read": "read", "seq_write": "write", "rand_read": "randread", "rand_write": "randwrite"}
FIO_FILE = "fio.dat"


def fio_engine(ctx: Context) -> str:
    engine = ctx.params.get("engine")
    if engine in ("io_uring", "libaio", "psync"):
        return str(engine)
    started = (ctx.start or {}).get("engine")  # what the disk kernel chose under engine=auto
    if started in ("io_uring", "libaio", "psync"):
        return str(started)
    return "psync" if int(ctx.params.get("iodepth") or 1) == 1 else "io_uring"


def fio(ctx: Context) -> list[Plan]:
    """One fio job per (op, block, threads) of our disk kernel: same block size, queue depth, direct
    or buffered I/O, file size (split between the threads, each on its own region, as ours) and
    phase length, on a file in the reference's own directory."""
    ops = [op for op in _list(ctx.params.get("op")) if op in FIO_RW]
    file_size = int(ctx.params.get("file_size") or 1 << 30)
    direct = bool(ctx.params.get("direct"))
    iodepth = int(ctx.params.get("iodepth") or 1)
    duration = float(ctx.params.get("duration_s") or 5)
    warmup = float(ctx.params.get("warmup_s") or 0)
    engine = fio_engine(ctx)
    plans = []
    for op in ops:
        for block in _list(ctx.params.get("blocks")):
            for threads in _list(ctx.params.get("threads")):
                region = file_size // threads
                region -= region % max(block, 4096)
                argv = [
                    "fio", f"--name={op}-{block}-{threads}", f"--filename={FIO_FILE}", f"--rw={FIO_RW[op]}",
                    f"--bs={block}", f"--size={region}", f"--offset_increment={region}", f"--numjobs={threads}",
                    f"--iodepth={iodepth}", f"--ioengine={engine}", f"--direct={int(direct)}",
                    "--time_based", f"--runtime={_secs(duration)}", f"--ramp_time={_secs(warmup)}",
                    "--group_reporting", "--invalidate=1", "--output-format=json",
                ]
                if op == "rw":
                    argv.append("--rwmixread=50")
                plans.append(Plan(tool="fio", argv=tuple(argv), parser="fio",
                                  matches={"op": op, "threads": threads, "block_bytes": block},
                                  timeout_s=duration + warmup + 120.0, primary="bw"))
    return plans


def _secs(value: float) -> str:
    # fio takes whole seconds without a unit; a fraction goes to milliseconds
    return f"{int(value)}" if float(value).is_integer() else f"{int(round(value * 1000))}ms"


# --- network: iperf3 (throughput) and sockperf (ping-pong) on loopback --------------------------------

UDP_MAX = 65507  # the largest UDP payload over IPv4
SOCKPERF_MIN = 14  # sockperf's smallest message (its own header)
NET_MARGIN_S = 30.0  # beyond the tool's own duration


def net_cpus(affinity: Sequence[int] | None = None) -> tuple[int, int] | None:
    """Where our loopback kernel puts one stream: the client on the first CPU of the affinity mask, the
    server on the next one (net.c server_pin_for). None on a single CPU: nothing to pin apart."""
    cpus = sorted(affinity if affinity is not None else os.sched_getaffinity(0))
    return (cpus[0], cpus[1]) if len(cpus) >= 2 else None


def _whole_s(value: float, least: int = 1) -> int:
    # iperf3 3.x and sockperf take whole seconds
    return max(least, math.ceil(float(value)))


def _iperf3_plans(ctx: Context, host: str, port: str, pin: tuple[int, int] | None,
                  server_argv: tuple[str, ...] = (), unavailable: str | None = None) -> list[Plan]:
    """iperf3 clients per (size, streams) of a *_stream run against host:port, matched to our rows."""
    op = _op(ctx)
    if op not in ("tcp_stream", "udp_stream"):
        return []
    udp = op == "udp_stream"
    duration = _whole_s(ctx.params.get("duration_s") or 5)
    warmup = _whole_s(ctx.params.get("warmup_s") or 0, least=0)
    plans = []
    for size in _list(ctx.params.get("sizes")):
        if udp and int(size) > UDP_MAX:
            continue
        for streams in _list(ctx.params.get("streams") or 1):
            argv = ["iperf3", "-c", host, "-p", port, "-J", "-t", str(duration), "-l", str(size),
                    "-P", str(streams)]
            if udp:
                argv += ["-u", "-b", "0"]  # no -O for UDP: iperf3 3.x counts omitted datagrams as lost
            elif warmup:
                argv += ["-O", str(warmup)]
            if pin and int(streams) == 1:
                argv += ["-A", f"{pin[0]},{pin[1]}"]
            plans.append(Plan(
                tool="iperf3", argv=tuple(argv), parser=reference_net.parse_iperf3, primary="received_mbps",
                matches={"op": op, "threads": streams, "block_bytes": size},
                server_argv=server_argv, server_proto="tcp", unavailable=unavailable,
                timeout_s=duration + warmup + NET_MARGIN_S,
            ))
    return plans


def iperf3(ctx: Context, affinity: Sequence[int] | None = None) -> list[Plan]:
    """iperf3 per (size, streams) of a *_stream run: a one-off server of its own on a free loopback port,
    the client with -l size -P streams, JSON; the receiver's sum in Mbit/s is the figure, as ours. One
    stream runs pinned like our kernel's (client, server on two CPUs: -A c,s); several streams are left
    to the OS (iperf3 before 3.16 drives them all from one thread)."""
    return _iperf3_plans(ctx, "127.0.0.1", PORT, net_cpus(affinity),
                         server_argv=("iperf3", "-s", "-1", "-p", PORT, "-B", "127.0.0.1"))


def _sockperf_plans(ctx: Context, host: str, port: str, pin: tuple[int, int] | None,
                    own_server: bool, unavailable: str | None = None) -> list[Plan]:
    """sockperf ping-pong per size of a *_rr run with one stream against host:port; with own_server, its own
    server (sr) on the same host, started first."""
    op = _op(ctx)
    if op not in ("tcp_rr", "udp_rr"):
        return []
    if 1 not in [int(s) for s in _list(ctx.params.get("streams") or 1)]:
        return []
    proto = ["--tcp"] if op == "tcp_rr" else []  # sockperf's default is UDP
    busy = ["--nonblocked"] if ctx.params.get("poll") == "busy" else []
    # sockperf discards its first 400 ms and last 50 ms itself: -t covers our warm-up and measured time
    duration = _whole_s(float(ctx.params.get("duration_s") or 3) + float(ctx.params.get("warmup_s") or 0))
    client_pin = ("taskset", "-c", str(pin[0])) if pin else ()
    server_pin = ("taskset", "-c", str(pin[1])) if pin else ()
    plans = []
    for size in _list(ctx.params.get("sizes")):
        if not SOCKPERF_MIN <= int(size) <= UDP_MAX:
            continue
        argv = (*client_pin, "sockperf", "pp", *proto, "-i", host, "-p", port, "-m", str(size),
                "-t", str(duration), "--full-rtt", *busy)
        server = (*server_pin, "sockperf", "sr", *proto, "-i", host, "-p", port, *busy) if own_server else ()
        plans.append(Plan(
            tool="sockperf", argv=argv, needs=("sockperf",) if pin else (), parser=reference_net.parse_sockperf_rr,
            primary="round_trips_per_s", matches={"op": op, "threads": 1, "block_bytes": size},
            server_argv=server, server_proto="tcp" if proto else "udp", unavailable=unavailable,
            timeout_s=duration + NET_MARGIN_S,
        ))
    return plans


def sockperf(ctx: Context, affinity: Sequence[int] | None = None) -> list[Plan]:
    """sockperf ping-pong per size of a *_rr run with one stream (sockperf pp drives one connection; our
    rows with several streams have no counterpart): its own server (sr), --full-rtt so the figures are
    whole round trips as ours, --nonblocked on both ends under poll=busy, client and server pinned with
    taskset like our kernel's. Our RT/s is matched by round_trips_per_s = 1e6 / the average round trip."""
    return _sockperf_plans(ctx, "127.0.0.1", PORT, net_cpus(affinity), own_server=True)


# --- network: ping (ICMP echo) beside the round-trip ops ------------------------------------------------

PING_COUNT = 20
PING_INTERVAL_S = "0.2"  # iputils' smallest interval for a user without CAP_NET_RAW (older releases)
PING_MIN = 16  # below a struct timeval of data, iputils prints no round-trip times
PING_MAX = 65507  # the largest ICMP echo payload over IPv4 (65535 - 20 - 8)
PING_TIMEOUT_S = 30.0


def _ping_plans(ctx: Context, addr: str) -> list[Plan]:
    """`ping` per size of a *_rr run with one stream: 20 echoes 0.2 s apart, payload = our message size
    clamped to what ping can send (16..65507 B). An ICMP echo is answered by the peer's kernel: no socket,
    no process of ours on either side, so the figure is context for our row, not a like-for-like one."""
    op = _op(ctx)
    if op not in ("tcp_rr", "udp_rr"):
        return []
    if 1 not in [int(s) for s in _list(ctx.params.get("streams") or 1)]:
        return []
    plans = []
    for size in _list(ctx.params.get("sizes")):
        payload = min(max(int(size), PING_MIN), PING_MAX)
        argv = ("ping", "-n", "-c", str(PING_COUNT), "-i", PING_INTERVAL_S, "-s", str(payload), addr)
        plans.append(Plan(
            tool="ping", argv=argv, parser=functools.partial(reference_net.parse_ping_rr, payload_bytes=payload),
            primary="round_trips_per_s", matches={"op": op, "threads": 1, "block_bytes": size},
            timeout_s=PING_TIMEOUT_S,
        ))
    return plans


def ping(ctx: Context) -> list[Plan]:
    return _ping_plans(ctx, "127.0.0.1")


# --- network, two hosts: the same tools against the peer's reference servers ------------------------------

def _peer(ctx: Context) -> str:
    peer = ctx.params.get("peer")
    ipaddress.ip_address(peer if isinstance(peer, str) else "")  # the runner checked it; a bug must not reach argv
    return str(peer)


def _peer_port(ctx: Context, tool: str) -> tuple[str, str | None]:
    """(the port as an argv word, None) or (PORT, why the peer offered no server for this tool)."""
    port = ctx.reference_ports.get(tool)
    if isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= 65535:
        return str(port), None
    return PORT, (f"the serving host offered no {tool} server (not installed there, or it did not start; "
                  f"its runner's log says which)")


def iperf3_peer(ctx: Context) -> list[Plan]:
    """iperf3 as on loopback (same sizes, streams, duration, protocol), against the peer's `iperf3 -s`.
    Not pinned: -A would pin the remote server too, and our driving kernel leaves placement to the OS."""
    if _op(ctx) not in ("tcp_stream", "udp_stream"):
        return []
    port, why = _peer_port(ctx, "iperf3")
    return _iperf3_plans(ctx, _peer(ctx), port, None, unavailable=why)


def sockperf_peer(ctx: Context) -> list[Plan]:
    """sockperf ping-pong as on loopback, against the peer's `sockperf sr` (TCP or UDP as the op)."""
    if _op(ctx) not in ("tcp_rr", "udp_rr"):
        return []
    port, why = _peer_port(ctx, "sockperf")
    return _sockperf_plans(ctx, _peer(ctx), port, None, own_server=False, unavailable=why)


def ping_peer(ctx: Context) -> list[Plan]:
    if _op(ctx) not in ("tcp_rr", "udp_rr"):
        return []
    return _ping_plans(ctx, _peer(ctx))


# --- disk: IOzone (single process) --------------------------------------------------------------------

# our op -> (iozone tests to run, the iozone figure that matches): a read needs the file written first
IOZONE_OPS = {"seq_write": (("0",), "write"), "seq_read": (("0", "1"), "read"),
              "rand_read": (("0", "2"), "random_read"), "rand_write": (("0", "2"), "random_write")}
IOZONE_FILE = "iozone.tmp"
IOZONE_MAX_RECORD = 16 << 20  # iozone's largest record (16 MiB)
IOZONE_TIMEOUT_S = 300.0


def iozone(ctx: Context) -> list[Plan]:
    """IOzone per (op, block) of a disk run with one thread: one process (no -t), record = our block
    (4 KiB..16 MiB, whole KiB), file = our file size, -I for direct I/O, -e to count the flush in the
    write figures. IOzone is not time-based: it goes through the file once per test."""
    threads = [int(t) for t in _list(ctx.params.get("threads") or 1)]
    if 1 not in threads:
        return []
    file_kib = int(ctx.params.get("file_size") or 1 << 30) // 1024
    direct = bool(ctx.params.get("direct"))
    plans = []
    for op in _list(ctx.params.get("op")):
        if op not in IOZONE_OPS:
            continue
        tests, figure = IOZONE_OPS[op]
        for block in _list(ctx.params.get("blocks")):
            block = int(block)
            if block < 4096 or block > IOZONE_MAX_RECORD or block % 1024 or block // 1024 > file_kib:
                continue
            argv = ["iozone"]
            for t in tests:
                argv += ["-i", t]
            argv += ["-r", f"{block // 1024}k", "-s", f"{file_kib}k", "-f", IOZONE_FILE, "-e"]
            if direct:
                argv.append("-I")
            plans.append(Plan(tool="iozone", argv=tuple(argv), parser=reference_net.parse_iozone_mb,
                              primary=f"{figure}_mb_s", matches={"op": op, "threads": 1, "block_bytes": block},
                              timeout_s=IOZONE_TIMEOUT_S))
    return plans


# --- the table -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reference:
    tool: str
    build: Builder


REFERENCES: dict[str, tuple[Reference, ...]] = {
    "cpu": (Reference("hpcc", hpcc_hpl), Reference("likwid-bench", likwid_peakflops)),
    "cpu_trace": (),  # a 10-minute trace has no reference tool
    # Two-host jobs: the serving side measures nothing; it offers reference servers (reference_serve.py)
    # that the driving side's tools run against.
    "network_serve": (),
    "network_drive": (Reference("iperf3", iperf3_peer), Reference("sockperf", sockperf_peer),
                      Reference("ping", ping_peer)),
    "memory": (Reference("stream", stream),),
    "disk": (Reference("fio", fio), Reference("iozone", iozone)),
    "network": (Reference("iperf3", iperf3), Reference("sockperf", sockperf), Reference("ping", ping)),
    "gpu": (),  # vendor peaks are computed from device attributes, there is no tool to run
}


def plan(ctx: Context) -> tuple[list[Plan], list[dict[str, Any]]]:
    """The plans for this run, and a failed entry for any builder that broke (a bug must not fail the run)."""
    plans: list[Plan] = []
    broken: list[dict[str, Any]] = []
    for ref in REFERENCES.get(ctx.experiment, ()):
        try:
            plans.extend(ref.build(ctx))
        except Exception as exc:
            log.exception("reference builder %s failed", ref.tool)
            broken.append(entry(ref.tool, "failed", f"cannot plan {ref.tool}: {type(exc).__name__}: {exc}"[:2000],
                                [], {"op": ctx.params.get("op")}))
    return plans, broken


# --- running the plans ------------------------------------------------------------------------------------


def _tail(path: Path, chars: int = STDERR_TAIL) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 4 * chars))
            return fh.read().decode("utf-8", errors="replace").strip()[-chars:]
    except OSError:
        return ""


# Settings that pin a reference's BLAS to kernels other than the ones it would pick for this CPU. A
# reference runs at its best on this host, so it does not inherit them from the runner's environment
# (this project's own machines export OPENBLAS_CORETYPE=Haswell, which held hpcc's HPL on an AVX-512
# Zen 5 to AVX2 kernels: 55 instead of 89 GFLOP/s at N=10000 on one process).
REFERENCE_ENV_DROP = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def reference_env(env: Mapping[str, str]) -> dict[str, str]:
    """A reference tool's environment: the kernels' (kernel_env) without REFERENCE_ENV_DROP, plus its plan's."""
    return {**{k: v for k, v in kernel_env().items() if k not in REFERENCE_ENV_DROP}, **env}


class _Tool:
    """One reference process: argv list, own process group, dies with the runner, output to files."""

    def __init__(self, argv: list[str], cwd: Path, env: Mapping[str, str], output: str | None = None,
                 prefix: str = ""):
        self.cwd = cwd
        self.stdout_path, self.stderr_path = cwd / f"{prefix}.stdout", cwd / f"{prefix}.stderr"
        self.outputs = [self.stdout_path, self.stderr_path] + ([cwd / output] if output else [])
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(  # noqa: S603 - argv list of a resolved tool, never a shell
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd,
                env=reference_env(env), close_fds=True,
                preexec_fn=_child_setup(os.getpid()),
            )
        self.started = time.monotonic()
        self._kill_at: float | None = None

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass

    def stop(self) -> None:
        if self._kill_at is None:
            self._kill_at = time.monotonic() + KILL_GRACE_S
            self._signal(signal.SIGTERM)

    @property
    def stopping(self) -> bool:
        return self._kill_at is not None

    def poll(self, wait_s: float) -> int | None:
        if self._kill_at is not None and time.monotonic() >= self._kill_at:
            self._signal(signal.SIGKILL)
        try:
            return self.proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            return None

    def output_bytes(self) -> int:
        total = 0
        for path in self.outputs:
            try:
                total += path.stat().st_size
            except OSError:
                pass
        return total

    def close(self) -> None:
        self._signal(signal.SIGKILL)  # whatever the tool left in its group (mpirun's ranks)
        try:
            self.proc.wait(KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            pass


class ReferencePhase:
    """Runs the plans one after another; `entries` holds one finished entry per plan, in order."""

    def __init__(self, plans: list[Plan], base_dir: Path, deadline_at: float,
                 path: str | None = None, broken: list[dict[str, Any]] | None = None):
        self.plans = plans[:MAX_REFERENCES]
        self.base_dir = base_dir
        self.deadline_at = deadline_at
        self.path = path  # PATH to find the tools on; None: the runner's own
        self.entries: list[dict[str, Any]] = []
        self.broken = list(broken or [])  # builders that failed; reported after the plans
        self._tool: _Tool | None = None
        self._server: _Tool | None = None  # the running plan's own server, if it has one
        self._plan: Plan | None = None
        self._argv: list[str] = []
        self._timeout_s = 0.0
        self._stopped: str | None = None
        if len(plans) > MAX_REFERENCES:
            log.warning("%d reference runs planned; only the first %d are run", len(plans), MAX_REFERENCES)

    @property
    def done(self) -> bool:
        return self._tool is None and len(self.entries) >= len(self.plans)

    def report(self) -> list[dict[str, Any]]:
        """The `references` of the finish payload."""
        return (self.entries + self.broken)[:MAX_REFERENCES]

    def step(self, wait_s: float = 0.2) -> None:
        """Start the next tool, or wait up to wait_s for the running one."""
        if self.done:
            return
        if self._tool is None:
            self._start_next()
            return
        tool, plan = self._tool, self._plan
        assert plan is not None
        elapsed = time.monotonic() - tool.started
        if not tool.stopping:
            if elapsed > self._timeout_s:
                self._stopped = f"timed out after {self._timeout_s:.0f} s"
                tool.stop()
            elif tool.output_bytes() > MAX_OUTPUT_BYTES:
                self._stopped = f"printed more than {MAX_OUTPUT_BYTES >> 20} MiB"
                tool.stop()
        rc = tool.poll(wait_s)
        if rc is not None:
            self._conclude(rc)

    def abort(self, reason: str) -> None:
        """Stop the running tool now (SIGTERM, SIGKILL after the grace) and mark every plan left as failed."""
        if self._tool is not None and self._plan is not None:
            self._stopped = reason
            self._tool.stop()
            deadline = time.monotonic() + KILL_GRACE_S + 1
            rc = None
            while rc is None and time.monotonic() < deadline:
                rc = self._tool.poll(0.1)
            self._conclude(rc if rc is not None else -signal.SIGKILL)
        for plan in self.plans[len(self.entries):]:
            self.entries.append(entry(plan.tool, "failed", f"not run: {reason}", list(plan.argv), plan.matches))

    def close(self) -> None:
        if self._tool is not None:
            self._tool.close()
            self._tool = None
        self._stop_server()
        shutil.rmtree(self.base_dir, ignore_errors=True)

    # --- one plan ----------------------------------------------------------------------------------

    def _start_next(self) -> None:
        plan = self.plans[len(self.entries)]
        argv = list(plan.argv)
        if plan.unavailable is not None:
            self.entries.append(entry(plan.tool, "unavailable", plan.unavailable, argv, plan.matches))
            return
        resolved: dict[str, str] = {}
        names = (*plan.needs, argv[0], *plan.server_argv[:1])
        for name in names:  # the tool itself first: "hpcc is not installed" before mpirun
            exe = shutil.which(name, path=self.path if self.path is not None else os.environ.get("PATH"))
            if exe is None:
                why = f"{name} is not installed on this host"
                if name != plan.tool:
                    why += f" ({plan.tool} needs it)"
                self.entries.append(entry(plan.tool, "unavailable", why, argv, plan.matches))
                return
            resolved[name] = exe
        argv = [resolved.get(a, a) for a in argv]
        server_argv = [resolved.get(a, a) for a in plan.server_argv]
        left = self.deadline_at - time.monotonic() - FINISH_MARGIN_S
        if left < MIN_TIME_S:
            self.entries.append(entry(plan.tool, "failed",
                                      f"not run: {max(0.0, left):.0f} s left before the run's deadline",
                                      argv, plan.matches))
            return
        cwd = self.base_dir / f"ref-{len(self.entries)}"
        try:
            shutil.rmtree(cwd, ignore_errors=True)
            cwd.mkdir(parents=True, mode=0o700)
            for name, text in plan.files.items():
                (cwd / name).write_text(text)
            if server_argv:
                port = str(reference_net.free_port(plan.server_proto))
                argv = [a.replace(PORT, port) for a in argv]
                server_argv = [a.replace(PORT, port) for a in server_argv]
                refused = self._start_server(server_argv, cwd, plan, int(port))
                if refused is not None:
                    self.entries.append(entry(plan.tool, "failed", refused[:2000], argv, plan.matches))
                    self._stop_server()
                    shutil.rmtree(cwd, ignore_errors=True)
                    return
            self._tool = _Tool(argv, cwd, plan.env, plan.output)
        except (OSError, subprocess.SubprocessError) as exc:
            self.entries.append(entry(plan.tool, "failed", f"cannot start {argv[0]}: {exc}", argv, plan.matches))
            self._stop_server()
            shutil.rmtree(cwd, ignore_errors=True)
            return
        self._plan, self._argv = plan, argv
        self._timeout_s = min(plan.timeout_s, left)
        self._stopped = None
        log.info("reference %s started pid=%d timeout=%.0fs: %s", plan.tool, self._tool.proc.pid,
                 self._timeout_s, " ".join(argv))

    def _start_server(self, server_argv: list[str], cwd: Path, plan: Plan, port: int) -> str | None:
        """Start the plan's server and wait until it listens on the port; None, or why it did not."""
        server = self._server = _Tool(server_argv, cwd, plan.env, prefix=".server")
        log.info("reference %s server started pid=%d: %s", plan.tool, server.proc.pid, " ".join(server_argv))
        limit = time.monotonic() + SERVER_READY_S
        while True:
            rc = server.poll(0.02)
            if rc is not None:
                said = _tail(server.stderr_path) or _tail(server.stdout_path)
                return (f"{plan.tool} server exited before listening ({describe_exit(rc)})"
                        + (f"; output: {said}" if said else ""))
            ready = reference_net.port_ready(port, plan.server_proto)
            if ready is None:  # no /proc/net to look at: give it a moment
                time.sleep(0.5)
                return None
            if ready:
                return None
            if time.monotonic() > limit:
                return f"{plan.tool} server did not listen on 127.0.0.1:{port} within {SERVER_READY_S:.0f} s"

    def _stop_server(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.stop()
        limit = time.monotonic() + KILL_GRACE_S + 1
        while server.poll(0.05) is None and time.monotonic() < limit:
            pass
        server.close()

    def _conclude(self, rc: int) -> None:
        tool, plan, argv = self._tool, self._plan, self._argv
        assert tool is not None and plan is not None
        tool.close()
        self._stop_server()
        self._tool = self._plan = None
        try:
            self.entries.append(self._verdict(tool, plan, argv, rc))
        finally:
            shutil.rmtree(tool.cwd, ignore_errors=True)
        last = self.entries[-1]
        log.info("reference %s %s in %.1fs%s", plan.tool, last["status"], time.monotonic() - tool.started,
                 f": {last['reason']}" if last["reason"] else "")

    def _verdict(self, tool: _Tool, plan: Plan, argv: list[str], rc: int) -> dict[str, Any]:
        stderr = _tail(tool.stderr_path)

        def failed(text: str) -> dict[str, Any]:
            detail = f"{text}; stderr: {stderr}" if stderr else text
            return entry(plan.tool, "failed", detail[:2000], argv, plan.matches)

        if self._stopped is not None:
            return failed(f"{plan.tool} stopped: {self._stopped}")
        out_path = tool.cwd / plan.output if plan.output else tool.stdout_path
        if rc != 0:
            return failed(f"{plan.tool} failed ({describe_exit(rc)})"
                          + (f"; output: {_tail(out_path, 300)}" if not stderr else ""))
        try:
            with open(out_path, "rb") as fh:
                text = fh.read(MAX_OUTPUT_BYTES).decode("utf-8", errors="replace")
        except OSError as exc:
            return failed(f"{plan.tool} wrote no output {plan.output or 'on stdout'}: {exc.strerror or exc}")
        try:
            if callable(plan.parser):
                metrics = plan.parser(text)
            else:
                metrics = parse_text(plan.parser, text)["metrics"]
        except ParseError as exc:
            return failed(f"{plan.tool} output unreadable: {exc}")
        if plan.primary is not None:
            first = [m for m in metrics if m.get("name") == plan.primary][:1]
            for m in first:
                m["primary"] = True
            metrics = first + [m for m in metrics if all(m is not f for f in first)]
        return entry(plan.tool, "ok", None, argv, plan.matches, metrics)
