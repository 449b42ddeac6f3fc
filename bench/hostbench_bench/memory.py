"""bench memory: our memory kernel beside STREAM and likwid-bench, matched sizes and threads.

- STREAM (a `stream` binary on PATH, OpenMP, run with OMP_NUM_THREADS and bound threads): its Copy
  and Triad against our `copy` block op (8 MiB blocks over a buffer as large as one STREAM array) and
  our STREAM-variant `stream_copy` / `stream_triad` (plain stores) with STREAM's array size. STREAM
  reports the best of its 9 timed sweeps, so ours is the best 0.2-s sample of a 3-s phase. STREAM's
  Copy, compiled at -O2/-O3, is a call to glibc's memcpy (which picks rep movsb or non-temporal
  stores by size); our `copy` runs with `stores auto` (non-temporal past the L3), `stream_copy` is
  the plain-store loop.
- Without a `stream` binary, STREAM is hpcc's (Debian's `hpcc` package; HPL N=8000 sizes its vectors:
  21.3 M doubles, 171 MB each, split over the processes): one hpcc run per pair against our three
  STREAM ops; hpcc's Star figures are per process, so its total is their sum.
- likwid-bench `copy_mem_avx512` / `stream_mem_avx512` (non-temporal stores; the same 2 and 3 arrays
  and byte counts as STREAM's Copy and Triad) against our `stream_copy_nt` / `stream_triad_nt`, same
  total bytes and threads. likwid reports the mean over its run, so ours is the mean of a 2-s phase.

Both sides count bytes as STREAM does (16 B per element for copy, 24 for triad); MB/s = 10^6 B/s.
On a shared host a pair in which either side lost its CPUs to other processes is measured again.
Nothing is installed; a missing tool is reported as missing.
"""
import os
import re
import shutil

from hostbench_common.reftools import likwid, parse_text
from hostbench_common.reftools import stream as stream_tool
from hostbench_common.reftools.hpcc import HPL_NB
from hostbench_common.reftools.stream import HPCC_N, hpcc_n_for, hpcc_stream, omp_env

from hostbench_bench.common import (
    HBK,
    BenchReport,
    Pair,
    ToolMissing,
    cpu_share_of_child,
    figure,
    hbk_events,
    parsed,
    progress,
    resolve,
    results,
    sampler_ab_pairs,
)
from hostbench_bench.common import interleave_quiet as _interleave_quiet
from hostbench_bench.common import run as run_tool
from hostbench_bench.cpu import hpcc_env, run_hpcc

THREADS = (1, 2)
STREAM_BLOCK = 8 * 1024 * 1024  # the copy block op's block: 8 MiB


def parse_stream(text: str) -> dict:
    """STREAM's figures (the runner's parser): array size, threads counted, best rates (MB/s) by function;
    raises unless it validates."""
    metrics = parsed(lambda t: parse_text("stream", t)["metrics"], text, "stream")
    size = metrics[0].get("array_size")
    if size is None:
        raise RuntimeError(f"cannot read stream's array size: {text[-400:]}")
    return {"array_size": size, "threads": metrics[0].get("threads", 1), **{m["name"]: m["value"] for m in metrics}}


SAMPLER_PAIRS = 8  # with/without-sampler phase pairs per process (two processes)
QUIET = 0.8  # a side whose threads got less of their CPUs than this was disturbed by other processes


def ours(args: list[str], best: bool) -> tuple[float, float]:
    """hbk memory: (MB/s, cpu_share). best: the best 0.2-s sample of a 3-s phase; else the mean of a 2-s
    phase without the sampler."""
    timing = (["--repeats", "1", "--duration_s", "3", "--interval_s", "0.2"] if best else
              ["--repeats", "1", "--duration_s", "2", "--no_sampler", "true"])
    events = hbk_events("memory", [*args, *timing, "--warmup_s", "0.5"], timeout=900)
    res = results(events)
    if len(res) != 1 or not res[0]["verified"]:
        raise RuntimeError(f"hbk memory {' '.join(args)}: no verified result")
    if best:
        return max(e["value"] for e in events if e.get("type") == "sample" and not e["warmup"]), res[0]["cpu_share"]
    return res[0]["value"], res[0]["cpu_share"]


def interleave_quiet(report: BenchReport, metric: str, reference: str, a, b, pairs: int) -> None:
    _interleave_quiet(report, metric, "MB/s", reference, a, b, pairs, QUIET)


def likwid_value(argv: list[str], threads: int) -> tuple[float, float]:
    # likwid-bench allocates and initialises its arrays on one thread before the timed loop, so its CPU
    # time over wall time x threads is 0.57-0.8 on an idle host: no measure of disturbance. Our side's
    # share decides these pairs (as in bench cpu); a disturbed likwid run shows as an outlier pair.

    out, _share = cpu_share_of_child(argv, threads)
    return figure(parsed(likwid.parse, out, "likwid-bench"), "bandwidth", "likwid-bench"), 1.0


# hpcc sizes its STREAM vectors from HPL's matrix (N^2 / 3 doubles over the processes; N a multiple of its NB): the
# runner's definition (reftools/stream.py), which runs STREAM from hpcc too where no `stream` binary exists
HPCC_NB = HPL_NB
MEMORY_SHARE = 0.7  # of MemAvailable a bench may take (the rest: the OS, the other side's process, slack)


def stream_rule() -> tuple[int, dict]:
    """STREAM's rule on this host, as our kernel applies it: elements per array = 4 x the L3 of the CPUs in
    use / 8 bytes (its default array_size), and the caches it read (sysfs), with the ISA it runs (isa)."""
    start = hbk_events("memory", ["--op", "stream_triad_nt", "--threads", "1", "--repeats", "1", "--duration_s", "0.2",
                                  "--warmup_s", "0", "--no_sampler", "true"])[0]
    return int(start["array_size"]), {**(start.get("caches") or {}), "isa": start.get("isa")}


def mem_available() -> int | None:
    """MemAvailable from /proc/meminfo, bytes; None where it cannot be read."""
    try:
        with open("/proc/meminfo") as f:
            m = re.search(r"^MemAvailable:\s+(\d+) kB", f.read(), re.M)
    except OSError:
        return None
    return int(m.group(1)) * 1024 if m else None


def gib(b: float) -> str:
    """A byte count in GiB, or MiB below 1 GiB (a 32 MiB L3 is not "0.0 GiB")."""
    return f"{b / 2**30:.1f} GiB" if b >= 2**30 else f"{b / 2**20:.0f} MiB"


def parse_hpcc_stream(text: str, processes: int) -> dict:
    """hpcc's STREAM: elements per vector over all processes, and Copy/Triad MB/s over all of them (hpcc's
    Star figures are per process, every process running at once): the runner's reading (reftools/stream.py)."""
    metrics = parsed(lambda t: hpcc_stream(t, processes), text, "hpcc")
    return {"array_size": metrics[0]["array_size"], **{m["name"]: m["value"] for m in metrics
                                                        if m["name"] in ("copy", "triad")}}


def hpcc_stream_pairs(report: BenchReport, pairs: int, rule: int) -> int:
    """STREAM as Debian ships it, inside hpcc, when no `stream` binary is on PATH. One hpcc run (all its
    tests: a minute or two) gives Copy and Triad, so each pair is one hpcc run against our three STREAM
    ops, in alternating order. Returns hpcc's elements per vector at one process (the likwid pairs' size)."""
    env = hpcc_env()[0]
    first_size = 0
    hpl_n = hpcc_n_for(rule)
    need = hpl_n * hpl_n * 8  # HPL's matrix; hpcc's STREAM vectors (3 x N^2 / 3 doubles) take as much
    avail = mem_available()
    if avail is not None and need > MEMORY_SHARE * avail:
        report.skipped.append(f"hpcc STREAM pairs: arrays of 4 x L3 ({rule} elements) need hpcc's HPL N={hpl_n}, "
                              f"{gib(need)} of memory; this host has {gib(avail)} available (a bench takes at most "
                              f"{MEMORY_SHARE:.0%})")
        return 0
    if hpl_n > HPCC_N:
        report.notes.append(f"hpcc runs with HPL N={hpl_n} (not {HPCC_N}) so that its STREAM vectors reach 4 x L3 "
                            f"({rule} elements, STREAM's rule); its HPL takes longer accordingly")
    for t in THREADS:
        ref = f"hpcc StarSTREAM %s x {t} process{'es' if t > 1 else ''} (HPL N={hpl_n}), MB/s over all"
        size = 0  # hpcc's, learnt from pair 0 (hpcc goes first in even pairs)
        for i in range(pairs):
            def theirs(t: int = t) -> dict:  # this pass's thread count, bound when defined
                return parse_hpcc_stream(run_hpcc(hpl_n, t, env)[0], t)

            got = theirs() if i % 2 == 0 else None
            n = size = got["array_size"] if got else size
            threads = ["--threads", str(t), *(["--allow_cache", "true"] if n < rule else [])]
            mine = {
                "copy": ours(["--op", "copy", "--blocks", str(STREAM_BLOCK), "--buffer_bytes", str(n * 8), *threads],
                             best=True),
                "stream_copy": ours(["--op", "stream_copy", "--array_size", str(n), *threads], best=True),
                "stream_triad": ours(["--op", "stream_triad", "--array_size", str(n), *threads], best=True),
            }
            got = got or theirs()
            if got["array_size"] != n:
                raise RuntimeError(f"hpcc changed its STREAM size between runs: {n} then {got['array_size']}")
            for op, kernel in (("copy", "copy"), ("stream_copy", "copy"), ("stream_triad", "triad")):
                pair = Pair(f"{op}_t{t}", "MB/s", mine[op][0], got[kernel], ref % kernel.capitalize())
                report.pairs.append(pair)
                progress(pair, f"cpu_share ours {mine[op][1]:.3f}")
        if t == 1:
            first_size = size
    report.notes.append(f"no stream binary on PATH: STREAM is hpcc's (Debian's build), {first_size} elements per "
                        f"vector at 1 process ({first_size * 8 / 2**20:.0f} MiB), half that per process at 2; ours "
                        "gets the same total elements; hpcc reports the best of its timed sweeps, ours is the best "
                        "0.2-s sample of a 3-s phase")
    return first_size


def stream_env(threads: int) -> dict:
    return dict(os.environ, **omp_env(threads, bind="true"))


def run(pairs: int) -> BenchReport:
    report = BenchReport("memory")
    if not HBK.exists():
        raise ToolMissing(f"{HBK} is not built (make -C runner/kernels)")

    rule, caches = stream_rule()
    avail = mem_available()
    report.notes.append(f"STREAM's rule on this host: arrays of 4 x L3 = {rule} elements ({gib(rule * 8)} each; "
                        f"L3 {gib(caches.get('l3_total') or 0)} over the CPUs in use, {caches.get('source', '?')}); "
                        f"memory available {gib(avail) if avail else 'unknown'}")
    if avail is not None and 3 * rule * 8 > MEMORY_SHARE * avail:
        report.skipped.append(f"every pair: three arrays of 4 x L3 ({gib(3 * rule * 8)}) do not fit in "
                              f"{MEMORY_SHARE:.0%} of the {gib(avail)} of memory available")
        return report

    stream = shutil.which(stream_tool.argv()[0])
    array_size = 0
    if stream is None and shutil.which("hpcc") and shutil.which("mpirun"):
        try:
            array_size = hpcc_stream_pairs(report, pairs, rule)
        except RuntimeError as exc:  # the other comparisons still run
            report.skipped.append(f"hpcc STREAM pairs: {str(exc)[:300]}")
    elif stream is None:
        report.missing.append("stream (STREAM built with OpenMP, on PATH) or hpcc (apt install hpcc): "
                              "the STREAM pairs were not run")
    else:
        array_size = parse_stream(run_tool(resolve(stream_tool.argv()), env=stream_env(1)))["array_size"]
        cache = ["--allow_cache", "true"] if array_size < rule else []
        if cache:
            report.notes.append(f"the stream binary's arrays ({array_size} elements) are smaller than 4 x L3 ({rule}): "
                                "STREAM's size is compiled in (STREAM_ARRAY_SIZE), so both sides run at it and "
                                "measure caches as much as DRAM; rebuild stream with -DSTREAM_ARRAY_SIZE="
                                f"{rule} for a DRAM figure")
        report.notes.append(f"stream: {stream}, array size {array_size} elements "
                            f"({array_size * 8 / 2**20:.0f} MiB per array), OMP_PROC_BIND=true OMP_PLACES=cores")
        report.notes.append("gcc -O2/-O3 compiles STREAM's Copy loop into a glibc memcpy call (rep movsb, or "
                            "non-temporal stores past glibc.cpu.x86_non_temporal_threshold: glibc's choice); "
                            "our copy runs with stores auto (non-temporal past the L3), stream_copy is the "
                            "plain-store loop")
        for t in THREADS:
            def theirs(kernel: str, t: int = t) -> tuple[float, float]:
                out, share = cpu_share_of_child(resolve(stream_tool.argv()), t, env=stream_env(t))
                parsed = parse_stream(out)
                if parsed["threads"] != t:
                    raise RuntimeError(f"stream ran {parsed['threads']} threads, asked for {t}")
                return parsed[kernel], share

            ref = f"STREAM %s, OMP_NUM_THREADS={t}"
            threads = ["--threads", str(t), *cache]
            interleave_quiet(report, f"copy_t{t}", ref % "Copy",
                             lambda th=threads: ours(["--op", "copy", "--blocks", str(STREAM_BLOCK),
                                                      "--buffer_bytes", str(array_size * 8), *th], best=True),
                             lambda: theirs("copy"), pairs)
            for op, kernel in (("stream_copy", "copy"), ("stream_triad", "triad")):
                interleave_quiet(report, f"{op}_t{t}", ref % kernel.capitalize(),
                                 lambda op=op, th=threads: ours(["--op", op, "--array_size", str(array_size), *th],
                                                                best=True),
                                 lambda kernel=kernel: theirs(kernel), pairs)

    if shutil.which("likwid-bench") is None:
        report.missing.append("likwid-bench (apt install likwid): the non-temporal pairs were not run")
    else:
        n = max(array_size, rule)  # at least STREAM's rule; likwid then gets the same bytes
        suffix = likwid.MEMORY_ISA.get(str(caches.get("isa")), "")
        for t in THREADS:
            for op, (base, arrays) in likwid.MEMORY_TESTS.items():
                test = base + suffix
                size = f"{n * 8 * arrays // 1000}kB"
                argv = resolve(likwid.argv(test, f"S0:{size}:{t}", flag="-w"))
                try:
                    interleave_quiet(report, f"{op}_t{t}", f"likwid-bench -t {test} -w S0:{size}:{t}",
                                     lambda op=op, t=t: ours(["--op", op, "--array_size", str(n), "--threads", str(t)],
                                                             best=False),
                                     lambda argv=argv, t=t: likwid_value(argv, t), pairs)
                except RuntimeError as exc:  # one comparison that cannot run never stops the others
                    report.skipped.append(f"{op}_t{t} against likwid-bench -t {test}: {str(exc)[:300]}")
    n = max(array_size, rule)
    triad = ["--op", "stream_triad_nt", "--array_size", str(n), "--threads", "2"]
    # What the per-second sampler costs a memory-bound kernel. Two separate processes would not do: on
    # this kind of host 2-thread bandwidth jumps between ~60 and ~105 GB/s from one run to the next, for
    # reasons outside the guest (most likely where the host runs our two vCPUs), so a with/without pair
    # of processes often compares two different machines. One process (same arrays, same threads) runs
    # 2-s phases in pairs, one sampled once a second as the product runs and one not, the order swapped
    # every other pair (--sampler_ab); SAMPLER_PAIRS pairs per process, in two processes.
    try:
        sampler_ab_pairs(report, "stream_triad_nt_t2_with_vs_without_sampler", "MB/s", "memory", triad, SAMPLER_PAIRS)
    except RuntimeError as exc:
        report.skipped.append(f"the sampler's cost (stream_triad_nt, 2 threads): {str(exc)[:300]}")
    report.notes.append("ours: STREAM pairs the best 0.2-s sample of a 3-s phase (STREAM reports the best of its "
                        "9 sweeps); likwid pairs the mean of a 2-s phase (likwid-bench reports its mean)")
    report.notes.append(f"a pair counts when both sides got >= {QUIET} of their CPUs (cpu_share; the reference's "
                        "from its CPU time over wall time x threads); disturbed pairs are measured again")
    return report
