"""bench memory: our memory kernel beside STREAM and likwid-bench, matched sizes and threads.

- STREAM (a `stream` binary on PATH, OpenMP, run with OMP_NUM_THREADS and bound threads): its Copy
  and Triad against our `copy` block op (8 MiB blocks over a buffer as large as one STREAM array) and
  our STREAM-variant `stream_copy` / `stream_triad` (plain stores) with STREAM's array size. STREAM
  reports the best of its repeats, so ours is the best of ten 0.2-s repeats.
- likwid-bench `copy_mem_avx512` / `stream_mem_avx512` (non-temporal stores; the same 2 and 3 arrays
  and byte counts as STREAM's Copy and Triad) against our `stream_copy_nt` / `stream_triad_nt`, same
  total bytes and threads. likwid reports the mean over its run, so ours is the mean of a 2-s phase.

Both sides count bytes as STREAM does (16 B per element for copy, 24 for triad); MB/s = 10^6 B/s.
Nothing is installed; a missing tool is reported as missing.
"""
import os
import re
import shutil

from hostbench_cli.bench.common import HBK, BenchReport, ToolMissing, hbk_events, interleave, results
from hostbench_cli.bench.common import run as run_tool

THREADS = (1, 2)
STREAM_BLOCK = 8 * 1024 * 1024  # the copy block op's block: 8 MiB
LIKWID = {"stream_copy_nt": ("copy_mem_avx512", 2), "stream_triad_nt": ("stream_mem_avx512", 3)}


def parse_stream(text: str) -> dict:
    """STREAM's output: array size, threads counted, best rates (MB/s); raises unless it validates."""
    if "Solution Validates" not in text:
        raise RuntimeError(f"stream did not validate its results: {text[-400:]}")
    size = re.search(r"Array size = (\d+)", text)
    rates = {m.group(1).lower(): float(m.group(2))
             for m in re.finditer(r"^(Copy|Scale|Add|Triad):\s+([\d.]+)", text, re.M)}
    threads = re.search(r"Number of Threads counted = (\d+)", text)
    if not size or set(rates) != {"copy", "scale", "add", "triad"}:
        raise RuntimeError(f"cannot read stream's output: {text[-400:]}")
    return {"array_size": int(size.group(1)), "threads": int(threads.group(1)) if threads else 1, **rates}


def parse_likwid(text: str) -> float:
    m = re.search(r"^MByte/s:\s+([\d.]+)", text, re.M)
    if not m:
        raise RuntimeError(f"cannot read likwid-bench's output: {text[-400:]}")
    return float(m.group(1))


class Ours:
    """Runs hbk memory and remembers the lowest cpu_share seen (a busy host shows there)."""

    def __init__(self) -> None:
        self.min_cpu_share = 1.0

    def value(self, args: list[str], best: bool) -> float:
        res = results(hbk_events("memory", args, timeout=900))
        if not res or not all(r["verified"] for r in res):
            raise RuntimeError(f"hbk memory {' '.join(args)}: no verified result")
        self.min_cpu_share = min([self.min_cpu_share] + [r["cpu_share"] for r in res])
        values = [r["value"] for r in res]
        return max(values) if best else sum(values) / len(values)


def stream_env(threads: int) -> dict:
    return dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="true", OMP_PLACES="cores")


def run(pairs: int) -> BenchReport:
    report = BenchReport("memory")
    if not HBK.exists():
        raise ToolMissing(f"{HBK} is not built (make -C runner/kernels)")
    ours = Ours()
    best_of = ["--repeats", "10", "--duration_s", "0.2", "--warmup_s", "0.5", "--no_sampler", "true"]
    mean_of = ["--repeats", "1", "--duration_s", "2", "--warmup_s", "0.5", "--no_sampler", "true"]

    stream = shutil.which("stream")
    array_size = 0
    if stream is None:
        report.missing.append("stream (STREAM built with OpenMP, on PATH): the plain-store pairs were not run")
    else:
        first = parse_stream(run_tool([stream], env=stream_env(1)))
        array_size = first["array_size"]
        report.notes.append(f"stream: {stream}, array size {array_size} elements "
                            f"({array_size * 8 / 2**20:.0f} MiB per array), best of its repeats; "
                            f"OMP_PROC_BIND=true OMP_PLACES=cores")
        for t in THREADS:
            def theirs(kernel: str, t: int = t) -> float:
                out = parse_stream(run_tool([stream], env=stream_env(t)))
                if out["threads"] != t:
                    raise RuntimeError(f"stream ran {out['threads']} threads, asked for {t}")
                return out[kernel]

            ref = f"STREAM %s, OMP_NUM_THREADS={t}"
            common = ["--threads", str(t), *best_of]
            interleave(report, f"copy_t{t}", "MB/s", ref % "Copy",
                       lambda c=common: ours.value(["--op", "copy", "--blocks", str(STREAM_BLOCK),
                                                    "--buffer_bytes", str(array_size * 8), *c], best=True),
                       lambda: theirs("copy"), pairs)
            for op, kernel in (("stream_copy", "copy"), ("stream_triad", "triad")):
                interleave(report, f"{op}_t{t}", "MB/s", ref % kernel.capitalize(),
                           lambda op=op, c=common: ours.value(["--op", op, "--array_size", str(array_size), *c],
                                                              best=True),
                           lambda kernel=kernel: theirs(kernel), pairs)

    likwid = shutil.which("likwid-bench")
    if likwid is None:
        report.missing.append("likwid-bench (apt install likwid): the non-temporal pairs were not run")
    else:
        n = array_size or 0  # 0: our kernel's default, 4x L3 per array; likwid then gets the same bytes
        if not n:
            start = hbk_events("memory", ["--op", "stream_copy_nt", "--threads", "1", "--repeats", "1",
                                          "--duration_s", "0.2", "--warmup_s", "0", "--no_sampler", "true"])[0]
            n = start["array_size"]
        for t in THREADS:
            for op, (test, arrays) in LIKWID.items():
                size = f"{n * 8 * arrays // 1000}kB"
                argv = [likwid, "-t", test, "-w", f"S0:{size}:{t}"]
                interleave(report, f"{op}_t{t}", "MB/s", f"likwid-bench -t {test} -w S0:{size}:{t}",
                           lambda op=op, t=t: ours.value(["--op", op, "--array_size", str(n), "--threads", str(t),
                                                          *mean_of], best=False),
                           lambda argv=argv: parse_likwid(run_tool(argv)), pairs)
    report.notes.append(f"lowest cpu_share of our runs: {ours.min_cpu_share:.2f} "
                        "(below ~0.9 the host was busy: other processes took our CPUs)")
    report.notes.append("ours: plain-store pairs best of 10 x 0.2 s (as STREAM reports its best); "
                        "non-temporal pairs the mean of 2 s (as likwid-bench reports its mean)")
    return report

