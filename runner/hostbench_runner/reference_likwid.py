"""likwid-bench's text report (LIKWID 5.x): the figures of one `-t TEST -W ...` run.

reftools has no likwid parser (the issue's tool list does not name it), so it lives beside the
reference builders. Same rules as reftools: every figure of a complete report, or ParseError.

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

from .reftools import MAX_CHARS, Metric, ParseError
from .reftools._common import clean_text, metric, round_sig, to_float, to_int

_TEST = re.compile(r"^Test:\s+(\S+)\s*$", re.M)
_FIELD = re.compile(r"^(MFlops/s|MByte/s|Time|Using|Number of Flops|Data volume \(Byte\)):?\s+(.*?)\s*$", re.M)


def parse(raw: str) -> list[Metric]:
    if len(raw) > MAX_CHARS:
        raise ParseError("larger than any likwid-bench report")
    text = clean_text(raw)
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
        if m.group(1) == "Using":
            t = re.fullmatch(r"(\d+) threads?", m.group(2))
            if t:
                fields["threads"] = t.group(1)
            continue
        if m.group(1) in fields:
            raise ParseError(f"likwid-bench printed {m.group(1)} twice (garbled output)")
        fields[m.group(1)] = m.group(2)
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
