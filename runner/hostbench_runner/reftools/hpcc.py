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
    if re.search(r"^\s*\d+ tests completed and failed residual checks\.", text, re.M):
        m = re.search(r"^\s*(\d+) tests completed and failed residual checks\.", text, re.M)
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
