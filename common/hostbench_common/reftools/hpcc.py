"""HPC Challenge (hpcc) output: the key=value block between "Begin of Summary section." and
"End of Summary section." that hpcc writes at the end of hpccoutf.txt.

Figures as hpcc prints them, except HPL which hpcc reports in Tflop/s and we give in GFLOPS (x1000).
"Star" figures are per-process averages with every MPI process running the kernel at once, "Single"
ones are one process running alone, "MPI" ones use all processes together; each metric carries that
as `variant`. hpcc's GB (STREAM, PTRANS, ping-pong/ring bandwidth) is 10^9 bytes.

Refused: no complete summary section (truncated run); `Success=0` (hpcc's own verdict that one of its
verification checks failed: the summary does not say which figure is affected, so none is trusted;
`hostbench parse hpl` still reads the HPL rows one by one and flags the failed ones); a missing or
non-positive core figure (HPL_Tflops, StarDGEMM_Gflops, StarSTREAM_Triad). Another figure that is
exactly -1 is hpcc's "not run" (its initial value; e.g. the ping-pong and ring figures of a run with
one MPI process) and is left out; any other negative figure is refused.
"""

from __future__ import annotations

import math
import re

from ._common import Metric, ParseError, metric, not_this_tool, round_sig, to_float
from .plan import Context, Plan, as_list, op_of

_BEGIN = "Begin of Summary section."
_END = "End of Summary section."

# (summary key, metric name, unit, variant)
_FIGURES: tuple[tuple[str, str, str, str | None], ...] = (
    ("StarDGEMM_Gflops", "dgemm_gflops", "GFLOPS", "star"),
    ("SingleDGEMM_Gflops", "dgemm_gflops", "GFLOPS", "single"),
    ("StarSTREAM_Copy", "stream_copy", "GB/s", "star"),
    ("StarSTREAM_Scale", "stream_scale", "GB/s", "star"),
    ("StarSTREAM_Add", "stream_add", "GB/s", "star"),
    ("StarSTREAM_Triad", "stream_triad", "GB/s", "star"),
    ("SingleSTREAM_Copy", "stream_copy", "GB/s", "single"),
    ("SingleSTREAM_Scale", "stream_scale", "GB/s", "single"),
    ("SingleSTREAM_Add", "stream_add", "GB/s", "single"),
    ("SingleSTREAM_Triad", "stream_triad", "GB/s", "single"),
    ("PTRANS_GBs", "ptrans", "GB/s", "mpi"),
    ("MPIRandomAccess_GUPs", "randomaccess_gups", "GUP/s", "mpi"),
    ("StarRandomAccess_GUPs", "randomaccess_gups", "GUP/s", "star"),
    ("SingleRandomAccess_GUPs", "randomaccess_gups", "GUP/s", "single"),
    ("MPIRandomAccess_LCG_GUPs", "randomaccess_lcg_gups", "GUP/s", "mpi"),
    ("StarRandomAccess_LCG_GUPs", "randomaccess_lcg_gups", "GUP/s", "star"),
    ("SingleRandomAccess_LCG_GUPs", "randomaccess_lcg_gups", "GUP/s", "single"),
    ("MPIFFT_Gflops", "fft_gflops", "GFLOPS", "mpi"),
    ("StarFFT_Gflops", "fft_gflops", "GFLOPS", "star"),
    ("SingleFFT_Gflops", "fft_gflops", "GFLOPS", "single"),
    ("MinPingPongLatency_usec", "pingpong_latency_min", "µs", None),
    ("AvgPingPongLatency_usec", "pingpong_latency_avg", "µs", None),
    ("MaxPingPongLatency_usec", "pingpong_latency_max", "µs", None),
    ("NaturallyOrderedRingLatency_usec", "ring_latency_natural", "µs", None),
    ("RandomlyOrderedRingLatency_usec", "ring_latency_random", "µs", None),
    ("MinPingPongBandwidth_GBytes", "pingpong_bandwidth_min", "GB/s", None),
    ("AvgPingPongBandwidth_GBytes", "pingpong_bandwidth_avg", "GB/s", None),
    ("MaxPingPongBandwidth_GBytes", "pingpong_bandwidth_max", "GB/s", None),
    ("NaturallyOrderedRingBandwidth_GBytes", "ring_bandwidth_natural", "GB/s", None),
    ("RandomlyOrderedRingBandwidth_GBytes", "ring_bandwidth_random", "GB/s", None),
)
_CORE = ("HPL_Tflops", "StarDGEMM_Gflops", "StarSTREAM_Triad")


def parse(text: str) -> tuple[str, list[Metric]]:
    if "HPC Challenge Benchmark" not in text and _BEGIN not in text:
        raise not_this_tool("hpcc", text, "no 'HPC Challenge Benchmark' banner and no summary section")
    begin = text.find(_BEGIN)
    if begin < 0:
        raise ParseError("no 'Begin of Summary section.': the hpcc run did not finish (truncated output)")
    end = text.find(_END, begin)
    if end < 0:
        raise ParseError("the hpcc summary section has no 'End of Summary section.' (truncated output)")
    if text.count(_BEGIN) > 1:
        raise ParseError("more than one hpcc summary section in one file; give one run per file")

    values: dict[str, str] = {}
    for line in text[begin + len(_BEGIN) : end].split("\n"):
        line = line.strip()
        if not line:
            continue
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", line)
        if m is None:
            raise ParseError(f"malformed line in the hpcc summary: {line[:80]!r}")
        if m.group(1) in values:
            raise ParseError(f"the hpcc summary has {m.group(1)} twice (garbled output)")
        values[m.group(1)] = m.group(2).strip()

    success = values.get("Success")
    if success != "1":
        raise ParseError(f"hpcc reports Success={success}: {_why_failed(text)}; its summary does not say which "
                         f"figure is affected, so none is taken (`hostbench parse hpl` reads the HPL rows one by "
                         f"one and flags the failed ones)")
    for key in _CORE:
        if key not in values:
            raise ParseError(f"the hpcc summary lacks {key}")

    procs = _int_or_none(values.get("CommWorldProcs"))
    hpl_tflops = to_float(values["HPL_Tflops"], "HPL_Tflops")
    if hpl_tflops <= 0:
        raise ParseError(f"hpcc HPL_Tflops={values['HPL_Tflops']}: HPL did not produce a figure")
    metrics: list[Metric] = [
        metric("hpl_gflops", round_sig(hpl_tflops * 1000.0), "GFLOPS", variant="mpi", printed=hpl_tflops,
               printed_unit="Tflop/s", n=_int_or_none(values.get("HPL_N")), nb=_int_or_none(values.get("HPL_NB")),
               p=_int_or_none(values.get("HPL_nprow")), q=_int_or_none(values.get("HPL_npcol")),
               time=_float_or_none(values.get("HPL_time")), time_unit="s", processes=procs)
    ]
    for key, name, unit, variant in _FIGURES:
        if key not in values:
            continue
        value = to_float(values[key], key)
        if value <= 0 and key in _CORE:
            raise ParseError(f"hpcc {key}={values[key]}: not a measured figure")
        if value == -1 and key not in _CORE:
            continue  # hpcc's "not run" (its initial value): with one process there is no ping-pong or ring
        if value < 0:
            raise ParseError(f"hpcc {key}={values[key]}: negative")
        metrics.append(metric(name, value, unit, variant=variant, key=key, processes=procs))
    return "text", metrics


def _why_failed(text: str) -> str:
    reasons: list[str] = []
    failed_hpl = len(re.findall(r"\.\.\.\.\.\. FAILED", text))
    if failed_hpl:
        reasons.append(f"{failed_hpl} HPL residual check(s) FAILED")
    if re.search(r"Failed Validation", text):
        reasons.append("STREAM validation failed")
    if re.search(r"^[ \t]*\d+ tests completed and failed residual checks\.", text, re.M):
        m = re.search(r"^[ \t]*(\d+) tests completed and failed residual checks\.", text, re.M)
        if m and m.group(1) != "0":
            reasons.append(f"{m.group(1)} PTRANS check(s) failed")
    return ", ".join(reasons) if reasons else "a verification check failed"


def _int_or_none(token: str | None) -> int | None:
    if token is None:
        return None
    try:
        return int(token)
    except ValueError:
        return None


def _float_or_none(token: str | None) -> float | None:
    if token is None:
        return None
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


# --- the reference run: HPL sized to our kernel's figure -----------------------------------------------

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
# hpcc runs all its tests (HPL, DGEMM, STREAM, PTRANS, RandomAccess, FFT, ...) on memory that grows with N^2: its
# typical time = HPCC_S_PER_N2 x N^2. Calibrated on the 2026-11-28 full suite (2-vCPU Zen 4 guest): the fp64 run's
# four hpcc runs (N = 4032, 5760, 5760, 5760 at 1, 2, 4, 8 processes) took 264 s beside its kernel and likwid-bench.
HPCC_S_PER_N2 = 2.28e-6


def typical_s(n: int) -> float:
    """hpcc's usual wall time at HPL's N (all its tests)."""
    return round(HPCC_S_PER_N2 * n * n, 1)


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


def hpl_problem_size(peak_gflops: float, mem_bytes: int | None, procs: int, cpus: int, asked: int = 0) -> int:
    """N for HPL: about HPL_TARGET_S at the peak (2/3 N^3 flops), the matrix (8 N^2 bytes) within
    a quarter of RAM and HPCC_MATRIX_PER_CPU per CPU in use, bounded 2000..20000, a multiple of NB. `asked`
    (a job's hpl_n, 1..HPL_N_MAX) replaces the sizing from the peak; the quarter of RAM still bounds it."""
    if asked > 0:
        n = float(min(asked, HPL_N_MAX))
    else:
        n = (1.5 * peak_gflops * 1e9 * HPL_TARGET_S) ** (1 / 3)
        n = min(n, math.sqrt(HPCC_MATRIX_PER_CPU * max(1, min(procs, cpus)) / 8))
        n = min(max(n, HPL_N_MIN), HPL_N_MAX)
    if mem_bytes:
        n = min(n, math.sqrt(HPL_MEM_SHARE * mem_bytes / 8))  # a small host: below 2000 rather than swap
    n = int(n)
    return n if asked > 0 and n == asked else max(HPL_NB, n - n % HPL_NB)


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


# one process per thread, each single-threaded: the BLAS must not start threads of its own
SINGLE_THREADED_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
INPUT, OUTPUT = "hpccinf.txt", "hpccoutf.txt"  # in the directory hpcc runs in


def argv(procs: int, is_root: bool) -> list[str]:
    """hpcc on `procs` MPI processes (mpirun; as root it needs --allow-run-as-root); it reads INPUT from its
    working directory and writes OUTPUT there."""
    return ["mpirun"] + (["--allow-run-as-root"] if is_root else []) + [
        "--oversubscribe", "-np", str(procs), "hpcc"]


def plans(ctx: Context) -> list[Plan]:
    """hpcc's HPL per thread count of an fp64 CPU run: one process per thread, N sized from our figure or the
    job's hpl_n."""
    if op_of(ctx) != "fp64":
        return []
    asked = ctx.options.get("hpl_n")
    out = []
    for threads in as_list(ctx.params.get("threads")):
        peak = measured_gflops(ctx, threads) or DEFAULT_GFLOPS_PER_THREAD * threads
        n = hpl_problem_size(peak, ctx.mem_bytes, threads, ctx.cpus,
                             asked if isinstance(asked, int) and not isinstance(asked, bool) else 0)
        out.append(Plan(
            tool="hpcc", argv=tuple(argv(threads, ctx.is_root)), needs=("hpcc",), parser="hpcc", output=OUTPUT,
            matches={"op": "fp64", "threads": threads, "block_bytes": None},
            env=dict(SINGLE_THREADED_ENV), files={INPUT: hpcc_input(n, HPL_NB, 1, threads)},
            timeout_s=HPCC_TIMEOUT_S, primary="hpl_gflops", typical_s=typical_s(n),
            what=f"HPL N = {n:,}, {threads} process{'es' if threads > 1 else ''}",
        ))
    return out
