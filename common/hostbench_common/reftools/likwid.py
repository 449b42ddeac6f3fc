"""likwid-bench: its argv (peakflops for the CPU runs, the memory tests of bench memory) and its text report
(LIKWID 5.x): the figures of one `-t TEST -W ...` run.

It is not in PARSERS (`./hostbench parse` and the API's upload do not take likwid-bench), only the reference
runs and `./hostbench bench cpu|memory` read it. Same rules as the others: every figure of a complete
report, or ParseError.

    Test: peakflops_avx512_fma
    Using 2 threads
    Time:           4.488936e+00 sec
    MFlops/s:       56061.89
    MByte/s:        14949.84

`peakflops` = MFlops/s / 1000 in GFLOP/s (10^9), `bandwidth` = MByte/s in MB/s (10^6 bytes/s, what
likwid prints). likwid-bench exits 0 even for an unknown test, so the report itself is the verdict.
"""

from __future__ import annotations

import re

from . import MAX_CHARS, require_lines
from ._common import Metric, ParseError, clean_text, metric, round_sig, to_float, to_int
from .plan import Context, Plan, as_list, op_of

_TEST = re.compile(r"^Test:\s+(\S+)\s*$", re.M)
# [ \t] not \s, and the value stripped after: no blank run is tried twice (linear time on any text)
_FIELD = re.compile(r"^(MFlops/s|MByte/s|Time|Using|Number of Flops|Data volume \(Byte\)):?[ \t]+(.*)$", re.M)


def parse(raw: str) -> list[Metric]:
    if len(raw) > MAX_CHARS:
        raise ParseError("larger than any likwid-bench report")
    text = clean_text(raw)
    require_lines(text, "likwid-bench")
    err = re.search(r"^(?:Error|ERROR)[: ].*$", text, re.M)
    if err:
        raise ParseError(f"likwid-bench reported an error: {err.group(0).strip()[:200]}")
    tests = _TEST.findall(text)
    if "LIKWID MICRO BENCHMARK" not in text or not tests:
        raise ParseError("not likwid-bench output: no 'LIKWID MICRO BENCHMARK' header with a 'Test:' line")
    if len(tests) > 1:
        raise ParseError(f"{len(tests)} likwid-bench reports in one output; give one run per file")
    fields: dict[str, str] = {}
    for m in _FIELD.finditer(text):
        value = m.group(2).strip()
        if m.group(1) == "Using":
            t = re.fullmatch(r"(\d+) threads?", value)
            if t:
                fields["threads"] = t.group(1)
            continue
        if m.group(1) in fields:
            raise ParseError(f"likwid-bench printed {m.group(1)} twice (garbled output)")
        fields[m.group(1)] = value
    if "MFlops/s" not in fields and "MByte/s" not in fields:
        raise ParseError("the likwid-bench report has no MFlops/s or MByte/s line (truncated output?)")

    test = tests[0]
    threads = to_int(fields["threads"], "threads") if "threads" in fields else None
    seconds = None
    if "Time" in fields:
        tm = re.fullmatch(r"(\S+)\s+sec", fields["Time"])
        seconds = to_float(tm.group(1), "Time") if tm else None
    extra = {"test": test, "threads": threads, "time": seconds, "time_unit": "s" if seconds is not None else None}
    metrics: list[Metric] = []
    if "MFlops/s" in fields:
        mflops = to_float(fields["MFlops/s"], "MFlops/s")
        if mflops <= 0 and test.startswith("peakflops"):
            raise ParseError(f"likwid-bench {test}: MFlops/s {mflops} is not a measured figure")
        if mflops > 0:
            metrics.append(metric("peakflops", round_sig(mflops / 1000.0), "GFLOP/s",
                                  printed=mflops, printed_unit="MFlops/s", **extra))
    if "MByte/s" in fields:
        mbytes = to_float(fields["MByte/s"], "MByte/s")
        if mbytes < 0:
            raise ParseError(f"likwid-bench {test}: negative MByte/s")
        metrics.append(metric("bandwidth", mbytes, "MB/s", printed=mbytes, printed_unit="MByte/s", **extra))
    if not metrics:
        raise ParseError("no figure found")
    return metrics


# --- argv --------------------------------------------------------------------------------------------------

# Our CPU kernel's ISA names -> likwid-bench's peakflops test suffix (peakflops[_sp]<suffix>).
PEAKFLOPS_ISA = {"avx512": "_avx512_fma", "avx2": "_avx_fma", "sse2": "_sse", "scalar": ""}
# Our memory kernel's non-temporal STREAM ops -> (likwid-bench test, arrays it streams), and the test suffix
# for the vector ISA our kernel runs: the same stores on both sides. An AVX-512 test on a CPU without
# AVX-512 dies with SIGILL ("Illegal instruction").
MEMORY_TESTS = {"stream_copy_nt": ("copy_mem", 2), "stream_triad_nt": ("stream_mem", 3)}
MEMORY_ISA = {"avx512": "_avx512", "avx2": "_avx", "sse2": "_sse", "scalar": ""}
TIMEOUT_S = 120.0
# likwid-bench's usual wall time with its start: the 2026-11-28 full suite's fp32 run spent 27 s on four peakflops
# runs beside its kernel; a memory test over 128 MiB took 1.4 s of its own here (load_avx512, 1 thread).
TYPICAL_S = 7.0


def peakflops_test(op: str, isa: str | None) -> str:
    """likwid-bench's peakflops test for our fp64/fp32 op on this ISA (an unknown ISA: the scalar test)."""
    return ("peakflops" if op == "fp64" else "peakflops_sp") + PEAKFLOPS_ISA.get(str(isa), "")


def argv(test: str, workgroup: str, flag: str = "-W") -> list[str]:
    """One likwid-bench run: `-W` gives the workgroup's size for all its threads, `-w` per thread domain."""
    return ["likwid-bench", "-t", test, flag, workgroup]


def peakflops_argv(op: str, isa: str | None, threads: int) -> list[str]:
    # N: the whole node as one domain; 16 kB per thread stays in L1, so the FMA units are the limit.
    # likwid pins by its workgroup: `threads` threads on its first hardware threads.
    return argv(peakflops_test(op, isa), f"N:{16 * threads}kB:{threads}")


def likwid_isa(ctx: Context) -> str:
    """The ISA our kernel ran (its start event), else the host's best."""
    isa = (ctx.start or {}).get("isa")
    if isa not in PEAKFLOPS_ISA:
        isa = ((ctx.inventory or {}).get("cpu") or {}).get("best_isa")
    return isa if isa in PEAKFLOPS_ISA else "scalar"


# Our memory kernel's read/write block ops -> likwid-bench's test over one array: `load` reads it, `store_mem`
# writes it with non-temporal stores (ours: `stores auto`, non-temporal past the L3; `plain`: likwid's `store`).
BLOCK_TESTS = {"read": "load", "write": "store_mem"}


def memory_plans(ctx: Context) -> list[Plan]:
    """likwid-bench per thread count of a memory run: read -> load, write -> store_mem, stream_copy_nt ->
    copy_mem, stream_triad_nt -> stream_mem, each for our ISA, over as many bytes as our buffer or arrays
    (the start event's), the whole node as one domain."""
    op = op_of(ctx)
    start = ctx.start or {}
    isa = MEMORY_ISA.get(str(start.get("isa")), "")
    if op in BLOCK_TESTS:
        test = ("store" if start.get("stores") == "plain" else "store_mem") if op == "write" else BLOCK_TESTS[op]
        size = int(start.get("buffer_bytes") or 0)
    elif op in MEMORY_TESTS:
        test, arrays = MEMORY_TESTS[op]
        size = int(start.get("array_bytes") or 0) * arrays
    else:
        return []
    if size <= 0:
        return []
    test += isa
    return [Plan(tool="likwid-bench", argv=tuple(argv(test, f"N:{size}B:{threads}")), parser=parse,
                 matches={"op": op, "threads": threads, "block_bytes": None}, timeout_s=TIMEOUT_S,
                 primary="bandwidth", typical_s=TYPICAL_S, what=f"likwid-bench {test}, {threads} threads",
                 note=f"likwid-bench {test}: one sweep after another over {size} B" +
                      ("; this row moves one block per operation" if op in BLOCK_TESTS else ""))
            for threads in as_list(ctx.params.get("threads"))]


def plans(ctx: Context) -> list[Plan]:
    """likwid-bench peakflops per thread count of an fp64/fp32 CPU run; a memory run's: memory_plans."""
    if ctx.experiment == "memory":
        return memory_plans(ctx)
    op = op_of(ctx)
    if op not in ("fp64", "fp32"):
        return []
    isa = likwid_isa(ctx)
    return [Plan(tool="likwid-bench", argv=tuple(peakflops_argv(op, isa, threads)), parser=parse,
                 matches={"op": op, "threads": threads, "block_bytes": None},
                 timeout_s=TIMEOUT_S, primary="peakflops", typical_s=TYPICAL_S,
                 what=f"likwid-bench {peakflops_test(op, isa)}, {threads} threads")
            for threads in as_list(ctx.params.get("threads"))]
