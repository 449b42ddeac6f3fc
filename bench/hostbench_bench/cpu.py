"""CPU: our FMA / integer kernel vs the theoretical peak at the clock measured in the same run,
likwid-bench's peakflops kernels, and HPL from Debian's hpcc (FP64), at 1 and 2 threads.

On a shared host a measurement whose threads did not get their CPUs (another process, or the
hypervisor, took them: cpu_share = CPU time / (wall time x threads) below QUIET) says nothing about
the processor: that pair is measured again, and the note lists what was set aside."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from hostbench_common.peaks import cpu_peak, peak_clock_ghz, readable_inventory
from hostbench_common.reftools import hpcc, likwid
from hostbench_common.reftools.cli import parse_text
from hostbench_common.reftools.engine import REFERENCE_ENV_DROP
from hostbench_common.reftools.hpcc import SINGLE_THREADED_ENV
from hostbench_runner.inventory import collect

from hostbench_bench.common import (
    HBK,
    BenchReport,
    ToolMissing,
    cpu_share_of_child,
    figure,
    hbk_events,
    interleave_quiet,
    parsed,
    resolve,
    results,
    sampler_ab_pairs,
    tool,
)

THREADS = (1, 2)
DURATION_S = 5.0
HPL_N = 10000
QUIET = 0.97  # a measurement whose threads got less than 97 % of their CPUs was disturbed
SAMPLER_PAIRS = 8  # with/without-sampler phase pairs per process (two processes per op)


def _inventory() -> dict:
    return collect(kernel_bin=HBK)  # with the FMA probe: a CPU the peak table does not know gets an inferred peak


def _ours(op: str, threads: int, last_start: dict) -> tuple[float, float]:
    """(GFLOP/s or GIOP/s, cpu_share) of one measurement; last_start gets its start event (the clock)."""
    events = hbk_events("cpu", ["--op", op, "--threads", str(threads), "--repeats", "1",
                                "--duration_s", str(DURATION_S), "--warmup_s", "1"])
    last_start.clear()
    last_start.update(events[0])
    res = results(events)[0]
    last_start["result"] = res  # its clock_after_ghz: the clock right after the phase
    return res["value"], res["cpu_share"]


def _peak(inventory: dict, op: str, threads: int, start: dict) -> tuple[float, float]:
    """The theoretical peak at the clock our kernel measured under load (the higher of the one before its run
    and the one right after its phase, as the product computes it); a figure, not a run: its share is 1."""
    peak, why = cpu_peak(readable_inventory(inventory), op, threads, start.get("isa"),
                         peak_clock_ghz(start, threads, [start.get("result", {})]))
    if peak is None:
        raise ToolMissing(f"theoretical peak unknown: {why}")
    return peak.value, 1.0


def _likwid(op: str, threads: int, isa: str) -> tuple[float, float]:
    # the runner's peakflops run: N = the whole node, `threads` threads on its first hardware threads
    out, _share = cpu_share_of_child(resolve(likwid.peakflops_argv(op, isa, threads)), threads, timeout=300)
    # likwid-bench sets up and calibrates on one thread before its timed loop, so its CPU time over
    # wall time x threads says nothing about disturbance (0.76 at 1 thread, 0.51 at 2 on an idle
    # host): the pair is judged by our side's share only, and a disturbed likwid run shows as an
    # outlier pair in the table
    return figure(parsed(likwid.parse, out, "likwid-bench"), "peakflops", "likwid-bench"), 1.0


_hpl_share: list[float] = []
AVX512_CORES = {"SkylakeX", "Cooperlake", "SapphireRapids", "Zen4", "Zen5"}  # OpenBLAS cores with AVX-512 kernels


def openblas_core(blas: str, env: dict | None = None) -> str | None:
    """The kernel set OpenBLAS picks on this CPU ("Core: Haswell" with OPENBLAS_VERBOSE=2), or None when the
    BLAS is not OpenBLAS (or says nothing)."""
    probe = subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({blas!r})"], capture_output=True,
                           text=True, timeout=60, env=dict(env or os.environ, OPENBLAS_VERBOSE="2"),
                           stdin=subprocess.DEVNULL)
    m = re.search(r"^Core:\s*(\S+)", probe.stdout + probe.stderr, re.M)
    return m.group(1) if m else None


def hpcc_env() -> tuple[dict, list[str]]:
    """hpcc's environment: one thread per MPI process, without the BLAS kernel overrides the runner's
    references drop too (REFERENCE_ENV_DROP); and the dropped settings, "NAME=value" each."""
    env = dict(os.environ, **SINGLE_THREADED_ENV)
    return env, [f"{k}={env.pop(k)}" for k in REFERENCE_ENV_DROP if k in env]


def hpl_blas_env(blas: str, isa: str) -> tuple[dict, str]:
    """hpcc's environment, and a line saying which BLAS kernels it runs. HPL is compared at its best on this
    host: OpenBLAS picks its kernels for the CPU it finds, so an OPENBLAS_CORETYPE or OPENBLAS_L2_SIZE
    inherited from the caller's shell is dropped (this project's machines export OPENBLAS_CORETYPE=Haswell,
    which held HPL to AVX2 kernels on an AVX-512 Zen 5: 55 against 89 GFLOP/s at N=10000, 1 process). If
    OpenBLAS is older than the CPU and falls back to a kernel set without AVX-512 where ours runs AVX-512,
    it is given its AVX-512 set (OPENBLAS_CORETYPE=SkylakeX)."""
    env, dropped = hpcc_env()
    core = openblas_core(blas, env)
    if core is None:
        return env, f"BLAS {blas}"
    why = f"detected{'; inherited ' + ', '.join(dropped) + ' dropped' if dropped else ''}"
    if isa == "avx512" and core not in AVX512_CORES:
        env["OPENBLAS_CORETYPE"] = "SkylakeX"
        why = f"OPENBLAS_CORETYPE=SkylakeX: it detected {core}, without AVX-512 kernels, on this AVX-512 CPU"
        core = openblas_core(blas, env)
    return env, f"BLAS {blas}, OpenBLAS core {core} ({why})"


def run_hpcc(n: int, threads: int, env: dict) -> tuple[str, float]:
    """hpcc on `threads` single-threaded MPI processes (HPL N=n, NB=192, P=1, Q=threads) in a scratch
    directory, with the runner's input file and argv: the text of its output file, and its CPU time / (wall
    time x processes)."""
    argv = resolve(hpcc.argv(threads, os.geteuid() == 0), "hpcc")
    work = Path(tempfile.mkdtemp(prefix="hb-hpcc-"))
    try:
        (work / hpcc.INPUT).write_text(hpcc.hpcc_input(n, hpcc.HPL_NB, 1, threads))
        _out, share = cpu_share_of_child(argv, threads, env=env, timeout=1200, cwd=work)
        return (work / hpcc.OUTPUT).read_text(errors="replace"), share
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _hpl(threads: int, env: dict) -> tuple[float, float]:
    text, share = run_hpcc(HPL_N, threads, env)
    # hpcc's processes run single-threaded phases between its tests and mpirun adds its own time, so
    # the share is reported in the note only; the pair is judged by our side's share
    _hpl_share.append(round(share, 3))
    return _hpl_gflops(text), 1.0


def _hpl_gflops(text: str) -> float:
    metrics = parse_text("hpcc", text)["metrics"]
    return next(m["value"] for m in metrics if m["name"] == "hpl_gflops")


def run(pairs: int) -> BenchReport:
    report = BenchReport("cpu")
    inventory = _inventory()
    start: dict = {}
    blas = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    for op in ("fp64", "fp32", "int32"):
        unit = "GIOP/s" if op == "int32" else "GFLOP/s"
        try:
            for t in THREADS:
                def ours_vs_peak(op: str = op, t: int = t) -> tuple[float, float]:
                    return _ours(op, t, start)

                def peak(op: str = op, t: int = t) -> tuple[float, float]:
                    return _peak(inventory, op, t, start)

                interleave_quiet(report, f"{op}_{t}t_vs_peak", unit,
                                 "theoretical peak at the clock measured in the same run",
                                 ours_vs_peak, peak,
                                 pairs, QUIET, swap=False)  # the peak is computed from the clock ours just measured
        except ToolMissing as exc:  # an unknown peak skips these pairs; HPL and likwid-bench still run
            report.skipped.append(f"{op} against the theoretical peak: {exc}")
    # What the per-second sampler costs: phases with and without it inside one process, both cores busy (the
    # sampler thread then has to take its time from a measuring thread). Bar: with / without >= 0.99.
    for op in ("fp64", "int32"):
        sampler_ab_pairs(report, f"{op}_2t_with_vs_without_sampler", "GFLOP/s" if op == "fp64" else "GIOP/s",
                         "cpu", ["--op", op, "--threads", "2"], SAMPLER_PAIRS)
    isa = start.get("isa", "avx512")
    try:
        for op in ("fp64", "fp32"):
            for t in THREADS:
                def ours_vs_likwid(op: str = op, t: int = t) -> tuple[float, float]:
                    return _ours(op, t, start)

                def likwid(op: str = op, t: int = t) -> tuple[float, float]:
                    return _likwid(op, t, isa)

                interleave_quiet(report, f"{op}_{t}t_vs_likwid", "GFLOP/s",
                                 f"likwid-bench peakflops {op} {isa}, {t} thr",
                                 ours_vs_likwid, likwid, pairs, QUIET)
    except ToolMissing as exc:
        report.missing.append(str(exc))
    try:
        tool("hpcc")
        hpl_env, blas_text = hpl_blas_env(blas, isa)
        for t in THREADS:
            def ours_vs_hpl(t: int = t) -> tuple[float, float]:
                return _ours("fp64", t, start)

            def hpl(t: int = t) -> tuple[float, float]:
                return _hpl(t, hpl_env)

            interleave_quiet(report, f"fp64_{t}t_vs_hpl", "GFLOP/s",
                             f"hpcc HPL N={HPL_N} NB=192 P=1 Q={t}, {blas_text}",
                             ours_vs_hpl, hpl, pairs, QUIET)
    except ToolMissing as exc:
        report.missing.append(str(exc))
    report.notes.append(f"our kernel: {DURATION_S:.0f} s per measurement after 1 s warm-up, ISA {isa}, "
                        f"clock measured under load {start.get('clock_ghz')} GHz on one CPU, "
                        f"{start.get('clock_ghz_all_cpus')} GHz with every CPU busy (the 2-thread peaks)")
    if _hpl_share:
        report.notes.append(f"hpcc's CPU time / (wall time x processes) per run, for the record: {_hpl_share}")
    report.notes.append(f"a pair counts when our kernel got >= {QUIET} of its CPUs (cpu_share: CPU time over wall "
                        "time x threads); likwid-bench and hpcc have "
                        "single-threaded set-up phases that make their share meaningless, so ours decides; a "
                        "disturbed pair is measured again, up to 2 x pairs attempts")
    return report
