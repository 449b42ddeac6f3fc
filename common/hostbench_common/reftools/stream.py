"""STREAM (McCalpin) text output, and the STREAM table that hpcc prints in its StarSTREAM section.

We take the "Best Rate" column: STREAM's own headline, computed from the *minimum* time over the
repetitions after the first. The average and maximum times come along as extra keys. STREAM's
5.10 format prints MB/s (10^6 bytes/s); older 5.x print "Rate (MB/s)", the same figure. hpcc prints
"Rate (GB/s)" (10^9 bytes/s) and we convert to MB/s by multiplying by 1000, keeping the printed
figure in `printed`.

Refused: no table; a missing, duplicated or malformed Copy/Scale/Add/Triad row; a row whose times are
not ordered min <= avg <= max; a rate that does not follow from the printed array size and minimum
time (an OCR'd or hand-edited figure); no "Solution Validates" line after the table (truncated) or
any "Failed Validation" line (STREAM's own check failed).
"""

from __future__ import annotations

import math
import re

from ._common import Metric, ParseError, metric, not_this_tool, to_float, to_int
from .plan import Context, Plan, as_list, op_of

FUNCTIONS = ("copy", "scale", "add", "triad")
# bytes moved per element: copy and scale read one array and write one, add and triad read two
_WORDS = {"copy": 2, "scale": 2, "add": 3, "triad": 3}

_HEADER = re.compile(
    r"^\s*Function\s+(Best Rate MB/s|Rate \(MB/s\)|Rate \(GB/s\))\s+Avg time\s+Min time\s+Max time\s*$"
)
_ROW = re.compile(r"^\s*(Copy|Scale|Add|Triad):\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$")
_ARRAY = re.compile(r"^Array size = (\d+)(?: \(elements\))?, Offset = (\d+)", re.M)
_WORD = re.compile(r"^This system uses (\d+) bytes per (?:array element|DOUBLE PRECISION word)", re.M)
_THREADS = re.compile(r"^Number of Threads counted = (\d+)", re.M)
_PROCS = re.compile(r"^CommWorldProcs=(\d+)", re.M)


def parse(text: str) -> tuple[str, list[Metric]]:
    headers = [m for m in (_HEADER.match(line) for line in text.split("\n")) if m]
    if not headers:
        raise not_this_tool("stream", text, "no 'Function  Best Rate MB/s  Avg time  Min time  Max time' table")
    if len(headers) > 1:
        raise ParseError(f"{len(headers)} STREAM result tables in one file; give one run per file")
    if re.search(r"^[ \t]*Failed Validation", text, re.M):
        failed = re.search(r"^[ \t]*Failed Validation.*$", text, re.M)
        raise ParseError(f"STREAM's validation failed: '{failed.group(0).strip() if failed else ''}'")

    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if _HEADER.match(line))
    rate_col = headers[0].group(1)
    in_gbs = rate_col == "Rate (GB/s)"
    hpcc = bool(re.search(r"Begin of StarSTREAM section", text))

    rows: dict[str, tuple[float, float, float, float]] = {}
    decimals: dict[str, int] = {}
    end = len(lines)
    for i in range(start + 1, len(lines)):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("---") or stripped.startswith("Solution Validates"):
            end = i
            break
        m = _ROW.match(line)
        if m is None:
            raise ParseError(f"malformed STREAM table line {i + 1}: {stripped[:80]!r}")
        name = m.group(1).lower()
        if name in rows:
            raise ParseError(f"the STREAM table has two '{m.group(1)}:' rows (garbled output)")
        rate, avg, mn, mx = (to_float(m.group(k), f"STREAM {name}") for k in range(2, 6))
        if not (mn <= avg <= mx) or mn <= 0 or rate <= 0:
            raise ParseError(f"STREAM {name}: times are inconsistent (min {mn}, avg {avg}, max {mx}) "
                             f"or a figure is not positive")
        rows[name] = (rate, avg, mn, mx)
        token = m.group(4)
        decimals[name] = len(token.split(".")[1]) if "." in token else 0
    missing = [f for f in FUNCTIONS if f not in rows]
    if missing:
        raise ParseError(f"the STREAM table lacks the {', '.join(missing)} row(s) (truncated or garbled output)")
    if not re.search(r"^\s*Solution Validates", "\n".join(lines[end : end + 6]), re.M):
        raise ParseError("no 'Solution Validates' line after the STREAM table: the run did not finish "
                         "its own check (truncated output?)")

    array = _ARRAY.search(text)
    word = _WORD.search(text)
    if array and word and not in_gbs:
        _check_rates(rows, decimals, to_int(array.group(1), "array size"), to_int(word.group(1), "word size"))

    threads = _THREADS.search(text)
    procs = _PROCS.search(text)
    metrics: list[Metric] = []
    for name in FUNCTIONS:
        rate, avg, mn, mx = rows[name]
        extra: dict[str, object] = {"avg_time": avg, "min_time": mn, "max_time": mx, "time_unit": "s"}
        if in_gbs:
            value = round(rate * 1000.0, 6)
            extra.update(printed=rate, printed_unit="GB/s")
        else:
            value = rate
        if array:
            extra["array_size"] = to_int(array.group(1), "array size")
        if threads:
            extra["threads"] = to_int(threads.group(1), "threads")
        if hpcc:
            extra["source"] = "hpcc StarSTREAM (rank 0's table, every MPI process running STREAM at once)"
            if procs:
                extra["processes"] = to_int(procs.group(1), "processes")
        metrics.append(metric(name, value, "MB/s", **extra))
    return "text", metrics


def _check_rates(rows: dict[str, tuple[float, float, float, float]], decimals: dict[str, int], n: int,
                 word: int) -> None:
    """Best rate = bytes / min time. The time is rounded where it is printed (5.10: 1 µs, older 5.x:
    0.1 ms), so the rate must fall inside the interval that rounding allows; a digit lost or changed
    by OCR or editing falls outside it."""
    for name, (rate, _avg, mn, _mx) in rows.items():
        moved = _WORDS[name] * word * n
        half = 0.5 * 10.0 ** -decimals[name]
        lo_t, hi_t = mn - half, mn + half
        hi = 1e-6 * moved / lo_t if lo_t > 0 else float("inf")
        lo = 1e-6 * moved / hi_t
        if not (lo - 0.051 <= rate <= hi + 0.051):
            raise ParseError(f"STREAM {name}: the rate {rate} MB/s does not follow from the array size ({n}) "
                             f"and the minimum time ({mn} s): expected {lo:.1f}..{hi:.1f} (garbled output?)")


# --- the reference run ---------------------------------------------------------------------------------

# our memory kernel's ops -> the STREAM function that matches (`copy`, a block op, moves as much per element as
# STREAM's Copy: one read, one write; its blocks are named in the note)
OPS = {"stream_copy": "copy", "stream_scale": "scale", "stream_add": "add", "stream_triad": "triad",
       "stream_copy_nt": "copy", "stream_scale_nt": "scale", "stream_add_nt": "add", "stream_triad_nt": "triad",
       "copy": "copy"}
TIMEOUT_S = 300.0
TYPICAL_S = 5.0  # STREAM's 10 sweeps of its compiled-in arrays and its start
COPY_NOTE = ("STREAM's Copy sweeps whole arrays (c[j] = a[j]); this row copies one block per operation (the same "
             "bytes read and written per element)")
# hpcc (Debian's `hpcc`) contains STREAM; where no `stream` binary exists, it is STREAM. hpcc sizes its STREAM
# vectors from HPL's matrix: N^2 / 3 doubles per vector over all processes, so N follows from the array size.
HPCC_N = 8000  # the smallest N: 21.3 M doubles, 171 MB per vector
HPCC_MEM_SHARE = 0.5  # of the host's RAM for HPL's matrix (8 N^2 bytes; the STREAM vectors take as much)


def argv() -> list[str]:
    """McCalpin's `stream` binary on PATH: no arguments, its array size is compiled in (STREAM_ARRAY_SIZE)."""
    return ["stream"]


def omp_env(threads: int, bind: str = "spread") -> dict[str, str]:
    """STREAM's OpenMP threads: `threads` of them, bound (OMP_PROC_BIND=bind) one per core."""
    return {"OMP_NUM_THREADS": str(threads), "OMP_PROC_BIND": bind, "OMP_PLACES": "cores"}


def hpcc_n_for(elements: int) -> int:
    """The smallest HPL N (a multiple of hpcc's NB, at least HPCC_N) whose STREAM vectors (N^2 / 3 doubles over
    all processes) hold `elements`."""
    from .hpcc import HPL_NB

    n = max(HPCC_N, math.ceil(math.sqrt(3 * elements)))
    return -(-n // HPL_NB) * HPL_NB


def hpcc_stream(text: str, processes: int) -> list[Metric]:
    """hpcc's STREAM as a STREAM run over all its processes: Copy/Scale/Add/Triad in MB/s = the Star figure (per
    process, all running at once) x processes, with the elements per vector over all of them (`array_size`)."""
    from . import parse_text  # the registry imports this module

    star = {m["name"]: m for m in parse_text("hpcc", text)["metrics"] if m.get("variant") == "star"}
    vector = re.search(r"^STREAM_VectorSize=(\d+)$", text, re.M)
    if vector is None or any(f"stream_{f}" not in star for f in FUNCTIONS):
        raise ParseError("hpcc's summary has no StarSTREAM figures (no STREAM_VectorSize or a function missing)")
    size = to_int(vector.group(1), "STREAM_VectorSize") * processes
    return [metric(f, round(star[f"stream_{f}"]["value"] * 1000.0 * processes, 6), "MB/s", array_size=size,
                   processes=processes, printed=star[f"stream_{f}"]["value"], printed_unit="GB/s per process",
                   source="hpcc StarSTREAM x processes")
            for f in FUNCTIONS]


def _hpcc_plan(ctx: Context, op: str, threads: int) -> Plan:
    """hpcc in place of `stream`: `threads` single-threaded processes, HPL's N sized so that its STREAM vectors
    hold our array (the start event's array_size, or the copy buffer's doubles)."""
    from . import hpcc

    start = ctx.start or {}
    elements = int(start.get("array_size") or int(start.get("buffer_bytes") or 0) // 8 or 0)
    n = hpcc_n_for(elements)
    matches = {"op": op, "threads": threads, "block_bytes": None}
    note = (f"STREAM from hpcc (no stream binary on this host): StarSTREAM x {threads} process"
            f"{'es' if threads > 1 else ''}, HPL N={n} sizing its vectors ({n * n // 3} doubles over all)"
            + (f"; {COPY_NOTE}" if op == "copy" else ""))
    too_big = (f"hpcc's STREAM at HPL N={n} needs {8 * n * n / 2**30:.1f} GiB, more than "
               f"{HPCC_MEM_SHARE:.0%} of this host's {ctx.mem_bytes / 2**30:.1f} GiB"
               if ctx.mem_bytes and 8 * n * n > HPCC_MEM_SHARE * ctx.mem_bytes else None)
    # hpcc runs all its tests (minutes at this N): not where its processes would share CPUs, an oversubscribed row
    # that no figure could be set against fairly
    shared = (f"hpcc's STREAM runs one process per CPU, at most {ctx.cpus}: {threads} processes on {ctx.cpus} CPUs "
              f"would share them (the row is oversubscribed)" if threads > ctx.cpus else None)
    return Plan(tool="hpcc", argv=tuple(hpcc.argv(threads, ctx.is_root)), needs=("hpcc",),
                parser=lambda text: hpcc_stream(text, threads), output=hpcc.OUTPUT, matches=matches,
                env=dict(hpcc.SINGLE_THREADED_ENV), files={hpcc.INPUT: hpcc.hpcc_input(n, hpcc.HPL_NB, 1, threads)},
                timeout_s=hpcc.HPCC_TIMEOUT_S, primary=OPS[op], note=note, unavailable=shared or too_big,
                typical_s=hpcc.typical_s(n), what=f"hpcc's STREAM, HPL N = {n:,}, {threads} process"
                                                  f"{'es' if threads > 1 else ''}")


def plans(ctx: Context) -> list[Plan]:
    """`stream`, OpenMP threads = our thread count. Its array size is fixed when it is compiled, so only op
    and threads match; the parser reports it. Without a `stream` binary, hpcc's STREAM runs instead."""
    op = op_of(ctx)
    if op not in OPS:
        return []
    return [Plan(tool="stream", argv=tuple(argv()), parser="stream",
                 matches={"op": op, "threads": threads, "block_bytes": None},
                 env=omp_env(threads), timeout_s=TIMEOUT_S, primary=OPS[op], typical_s=TYPICAL_S,
                 what=f"STREAM, {threads} thread{'s' if int(threads) > 1 else ''}",
                 note=COPY_NOTE if op == "copy" else None, instead=_hpcc_plan(ctx, op, int(threads)))
            for threads in as_list(ctx.params.get("threads"))]
