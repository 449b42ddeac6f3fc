"""IOzone text output: the result table (auto mode -a, or the tests chosen with -i), the -R "Excel"
reports that follow it, and the throughput mode (-l/-u/-t) with its -R throughput report.

Figures are taken as printed, in iozone's "kBytes/sec" (KB/s where 1 KB = 1024 bytes: iozone counts
in kilobytes of 1024), one metric per test and (file size, record size): write, rewrite, read,
reread, random_read, random_write, bkwd_read, record_rewrite, stride_read, fwrite, frewrite, fread,
freread, with extra keys file_kb and record_kb. A test that was not run is a blank column in iozone's
table: we place each figure by its column position, so a blank never shifts a figure into the wrong
test. In throughput mode each test gives "Children see throughput for N <test>" (the sum of what each
process measured: iozone's headline); the parent's view and the per-process min/max/avg come along as
extra keys. With -O (operations per second) the unit is ops/s.

Refused: no "iozone test complete." (truncated run or an iozone error such as "Can not open temp
file"); a table header or row that is split, scrambled or has too many columns; a row given twice;
an -R report that disagrees with the table or cannot be read line by line; a throughput block whose
"Children see" line is malformed or given twice.
"""

from __future__ import annotations

import re

from ._common import Metric, ParseError, metric, not_this_tool, round_sig, to_float, to_int, zip_strict
from .fio import io_mode
from .plan import Context, Plan, as_list

COLUMNS = ("write", "rewrite", "read", "reread", "random_read", "random_write", "bkwd_read", "record_rewrite",
           "stride_read", "fwrite", "frewrite", "fread", "freread")
_HEADER_TOKENS = ("kb", "reclen", "write", "rewrite", "read", "reread", "read", "write", "read", "rewrite", "read",
                  "fwrite", "frewrite", "fread", "freread")
_TOP_TOKENS = ("random", "random", "bkwd", "record", "stride")

# -R report titles -> metric names
_EXCEL = {
    "Writer report": "write", "Re-writer report": "rewrite", "Reader report": "read", "Re-Reader report": "reread",
    "Random read report": "random_read", "Random write report": "random_write", "Backward read report": "bkwd_read",
    "Record rewrite report": "record_rewrite", "Stride read report": "stride_read", "Fwrite report": "fwrite",
    "Re-Fwrite report": "frewrite", "Fread report": "fread", "Re-Fread report": "freread",
}
# throughput mode: "Children see throughput for N <label>" -> metric name
_THROUGHPUT = {
    "initial writers": "write", "rewriters": "rewrite", "readers": "read", "re-readers": "reread",
    "reverse readers": "bkwd_read", "stride readers": "stride_read", "random readers": "random_read",
    "mixed workload": "mixed_workload", "random writers": "random_write", "pwrite writers": "pwrite",
    "pread readers": "pread", "fwriters": "fwrite", "freaders": "fread", "record rewriters": "record_rewrite",
    "re-pwrite writers": "repwrite", "pread re-readers": "repread",
}
# -R throughput report row labels -> metric names
_THROUGHPUT_EXCEL = {
    "Initial write": "write", "Rewrite": "rewrite", "Read": "read", "Re-read": "reread", "Reverse Read": "bkwd_read",
    "Stride read": "stride_read", "Random read": "random_read", "Mixed workload": "mixed_workload",
    "Random write": "random_write", "Pwrite": "pwrite", "Pread": "pread", "Fwrite": "fwrite", "Fread": "fread",
    "Record rewrite": "record_rewrite", "Re-pwrite": "repwrite", "Re-pread": "repread",
}


def parse(text: str) -> tuple[str, list[Metric]]:
    if "Iozone: Performance Test of File I/O" not in text and "iozone test complete" not in text:
        raise not_this_tool("iozone", text, "no 'Iozone: Performance Test of File I/O' banner")
    lines = text.split("\n")
    err = re.search(r"^(Can not open .*|Error .*|.*: No space left on device.*|.*failed.*)$", text, re.M)
    if "iozone test complete." not in text:
        why = f": iozone said {err.group(0).strip()!r}" if err else " (truncated output)"
        raise ParseError("no 'iozone test complete.' line: the run did not finish" + why)
    if err:
        raise ParseError(f"iozone reported an error: {err.group(0).strip()!r}")
    throughput = any("Children see throughput for" in line for line in lines)
    table = [i for i, line in enumerate(lines) if _is_header(line)]
    if throughput and table:
        raise ParseError("the file mixes iozone's throughput mode and its table; give one run per file")
    if throughput:
        return "text", _throughput(lines, _unit(text))
    if not table:
        raise ParseError("no complete iozone result table header ('kB  reclen  write  rewrite  read  reread ...') "
                         "on one line: the table is missing or garbled")
    if len(table) > 1:
        raise ParseError("more than one iozone result table in one file; give one run per file")
    metrics = _table(lines, table[0], _unit(text))
    _check_excel(lines, metrics)
    return "text", metrics


def _unit(text: str) -> str:
    m = re.search(r"^[ \t]*Output is in (\S+)", text, re.M)
    if m is None:
        raise ParseError("no 'Output is in ...' line: cannot tell the unit of the figures")
    word = m.group(1).lower()
    if word.startswith("kbytes/sec"):
        return "KB/s"
    if word.startswith("operations"):
        return "ops/s"
    raise ParseError(f"unsupported iozone output unit {m.group(0).strip()!r}")


def _is_header(line: str) -> bool:
    return tuple(t.lower() for t in line.split()) == _HEADER_TOKENS


def _table(lines: list[str], h: int, unit: str) -> list[Metric]:
    header = lines[h]
    top = lines[h - 1] if h > 0 else ""
    if tuple(top.split()) != _TOP_TOKENS:
        raise ParseError(f"the line above the iozone table header is not 'random random bkwd record stride' "
                         f"(garbled header): {top.strip()[:80]!r}")
    ends = [m.end() for m in re.finditer(r"\S+", header)]  # right edge of each header word
    metrics: list[Metric] = []
    seen: set[tuple[int, int]] = set()
    for i in range(h + 1, len(lines)):
        line = lines[i]
        if not line.strip():
            break
        tokens = [(m.group(0), m.end()) for m in re.finditer(r"\S+", line)]
        if not all(t.isdigit() for t, _e in tokens) or len(tokens) < 3:
            raise ParseError(f"malformed iozone table line {i + 1}: {line.strip()[:80]!r}")
        if len(tokens) > len(ends):
            raise ParseError(f"iozone table line {i + 1} has {len(tokens)} columns, the header {len(ends)}")
        if len(tokens) == len(ends):
            columns = list(range(len(ends)))
        else:
            columns = _place(tokens, ends, i + 1)
        file_kb, record_kb = int(tokens[0][0]), int(tokens[1][0])
        if columns[0] != 0 or columns[1] != 1:
            raise ParseError(f"iozone table line {i + 1}: the file size and record length are not in their columns")
        if record_kb <= 0 or file_kb <= 0 or record_kb > file_kb:
            raise ParseError(f"iozone table line {i + 1}: record length {record_kb} kB vs file size {file_kb} kB")
        if (file_kb, record_kb) in seen:
            raise ParseError(f"iozone table: file {file_kb} kB / record {record_kb} kB given twice")
        seen.add((file_kb, record_kb))
        for (token, _end), col in zip_strict(tokens[2:], columns[2:]):
            metrics.append(metric(COLUMNS[col - 2], to_int(token, "iozone"), unit, file_kb=file_kb,
                                  record_kb=record_kb))
    if not metrics:
        raise ParseError("the iozone result table has no rows")
    return metrics


def _place(tokens: list[tuple[str, int]], ends: list[int], lineno: int) -> list[int]:
    """Assign right-aligned figures to the header column whose right edge is within one character.

    iozone right-aligns each figure under its header word (the "read" headers sit one column left of
    their figures). A figure farther away is refused: guessing its column could file it under the
    wrong test."""
    columns: list[int] = []
    for token, end in tokens:
        best = min(range(len(ends)), key=lambda c: abs(ends[c] - end))
        if abs(ends[best] - end) > 1 or (columns and best <= columns[-1]):
            raise ParseError(f"iozone table line {lineno}: the figure {token} is not under a column header "
                             f"(misaligned or garbled line)")
        columns.append(best)
    return columns


def _check_excel(lines: list[str], metrics: list[Metric]) -> None:
    """-R prints every test again as a file-size x record-size matrix: it must agree with the table."""
    by_key = {(m["name"], m["file_kb"], m["record_kb"]): m["value"] for m in metrics}
    i = 0
    while i < len(lines):
        title = re.match(r'^"(.+ report)"\s*$', lines[i].strip())
        if title is None or title.group(1).startswith("Throughput"):
            i += 1
            continue
        name = _EXCEL.get(title.group(1))
        if name is None:
            raise ParseError(f"unknown iozone -R report {title.group(1)!r}")
        cols = re.findall(r'"(\d+)"', lines[i + 1] if i + 1 < len(lines) else "")
        if not cols:
            raise ParseError(f"iozone -R {title.group(1)!r} has no record-size header line")
        i += 2
        while i < len(lines) and lines[i].strip():
            m = re.match(r'^"(\d+)"((?:\s+\d+)+)\s*$', lines[i].strip())
            if m is None:
                raise ParseError(f"malformed iozone -R line {i + 1}: {lines[i].strip()[:80]!r}")
            values = m.group(2).split()
            if len(values) > len(cols):
                raise ParseError(f"iozone -R line {i + 1} has more figures than record sizes")
            for rec, value in zip(cols, values):
                key = (name, int(m.group(1)), int(rec))
                if key in by_key and by_key[key] != int(value):
                    raise ParseError(f"iozone -R {title.group(1)!r} says {value} for {m.group(1)} kB / {rec} kB "
                                     f"but the table says {by_key[key]}")
            i += 1


# The label is [^\s=][^=]* (stripped after): no two quantifiers here can take the same blanks, so a line is read in
# linear time (`(.+?)\s*=` backtracked over every run of blanks: quadratic, minutes for one upload).
_CHILDREN = re.compile(r"^\s*Children see throughput for\s+(\d+)\s+([^\s=][^=]*)=\s*([\d.]+)\s+(\S+)\s*$")
_PARENT = re.compile(r"^\s*Parent sees throughput for\s+(\d+)\s+([^\s=][^=]*)=\s*([\d.]+)\s+\S+\s*$")
_MIN_XFER = re.compile(r"^\s*Min xfer\s*=\s*([\d.]+)\s+\S+\s*$")
_PER_PROC = re.compile(r"^\s*(Min|Max|Avg) throughput per process\s*=\s*([\d.]+)\s+\S+\s*$")


def _throughput(lines: list[str], unit: str) -> list[Metric]:
    text = "\n".join(lines)
    rec = re.search(r"Each (?:process|thread) writes a (\d+) [kK][bB]yte file in (\d+) [kK][bB]yte records", text)
    file_kb = int(rec.group(1)) if rec else None
    record_kb = int(rec.group(2)) if rec else None
    metrics: list[Metric] = []
    seen: set[tuple[str, int]] = set()
    for i, line in enumerate(lines):
        if "Children see throughput for" not in line:
            continue
        m = _CHILDREN.match(line)
        if m is None:
            raise ParseError(f"malformed iozone throughput line {i + 1}: {line.strip()[:80]!r}")
        label = " ".join(m.group(2).split())
        name = _THROUGHPUT.get(label)
        if name is None:
            raise ParseError(f"unknown iozone throughput test {label!r} on line {i + 1}")
        procs = int(m.group(1))
        if (name, procs) in seen:
            raise ParseError(f"iozone throughput: '{label}' for {procs} processes given twice (garbled output)")
        seen.add((name, procs))
        extra: dict[str, object] = {"processes": procs, "file_kb": file_kb, "record_kb": record_kb,
                                    "mode": "throughput"}
        parent = _PARENT.match(lines[i + 1]) if i + 1 < len(lines) else None
        if parent is None or parent.group(2).strip() != m.group(2).strip():
            raise ParseError(f"iozone throughput: no 'Parent sees' line after line {i + 1} (garbled output)")
        extra["parent"] = to_float(parent.group(3), "iozone parent throughput")
        for follow in lines[i + 2 : i + 5]:
            pm = _PER_PROC.match(follow)
            if pm is None:
                raise ParseError(f"iozone throughput: the per-process lines after line {i + 1} are malformed")
            extra[f"per_process_{pm.group(1).lower()}"] = to_float(pm.group(2), "iozone per-process throughput")
        xfer = _MIN_XFER.match(lines[i + 5]) if i + 5 < len(lines) else None
        if xfer is not None:
            extra["min_xfer_kb"] = to_float(xfer.group(1), "iozone min xfer")
            if extra["min_xfer_kb"] == 0:
                extra["valid"] = False
                extra["invalid_reason"] = ("a process transferred nothing (Min xfer = 0 kB): the figure is not "
                                           f"{procs} processes working at once")
        metrics.append(metric(name, to_float(m.group(3), "iozone throughput"), unit, **extra))
    if not metrics:
        raise ParseError("iozone throughput mode without any 'Children see throughput' figure")
    _check_throughput_excel(lines, metrics)
    return metrics


def _check_throughput_excel(lines: list[str], metrics: list[Metric]) -> None:
    try:
        start = next(i for i, line in enumerate(lines) if line.strip().startswith('"Throughput report'))
    except StopIteration:
        return
    by_name: dict[str, list[float]] = {}
    for figure in metrics:
        by_name.setdefault(figure["name"], []).append(figure["value"])
    for i in range(start + 1, len(lines)):
        line = lines[i].strip()
        if not line or line.startswith('"Record size') or line.startswith('"Output is in'):
            continue
        if line == "iozone test complete.":
            return
        m = re.match(r'^"([A-Za-z -]*)"((?:\s+[\d.]+)+)\s*$', line)  # label stripped below: linear time
        if m is None:
            raise ParseError(f"malformed iozone -R throughput line {i + 1}: {line[:80]!r}")
        label = m.group(1).strip()
        name = _THROUGHPUT_EXCEL.get(label)
        if name is None:
            raise ParseError(f"unknown iozone -R throughput row {label!r}")
        values = [float(v) for v in m.group(2).split()]
        if by_name.get(name) != values:
            raise ParseError(f"iozone -R throughput row {label!r} {values} disagrees with the "
                             f"'Children see' figures {by_name.get(name)}")


# --- the reference run: one process, our block as its record --------------------------------------------

# our op -> (iozone tests to run, the iozone figure that matches): a read needs the file written first
OPS = {"seq_write": (("0",), "write"), "seq_read": (("0", "1"), "read"),
       "rand_read": (("0", "2"), "random_read"), "rand_write": (("0", "2"), "random_write")}
FILE = "iozone.tmp"
MAX_RECORD = 16 << 20  # iozone's largest record (16 MiB)
TIMEOUT_S = 300.0
# IOzone goes through the file once per test: its time is the bytes over the rate. Buffered, the page cache's rate
# (assumed 500 MB/s with the flush -e counts, a guess within the 2026-11-28 disk run's 609 s of fio and IOzone);
# direct, the device's (assumed 100 MB/s: a virtual disk's). One second for its start.
IOZONE_RATE = {False: 500e6, True: 100e6}


def plans(ctx: Context) -> list[Plan]:
    """IOzone per (op, block) of a disk run with one thread: one process (no -t), record = our block
    (4 KiB..16 MiB, whole KiB), file = our file size, in the mode our row ran (fio.io_mode): -I where
    ours ran direct; buffered where ours was buffered; where ours dropped the page cache (cache_dropped)
    IOzone cannot (it reads the file it has just written, from the cache), so that row gets no IOzone
    figure, and says why. -e counts the flush in the write figures. IOzone is not time-based: it goes
    through the file once per test."""
    threads = [int(t) for t in as_list(ctx.params.get("threads") or 1)]
    if 1 not in threads:
        return []
    file_kib = int(ctx.params.get("file_size") or 1 << 30) // 1024
    out = []
    for op in as_list(ctx.params.get("op")):
        if op not in OPS:
            continue
        tests, figure = OPS[op]
        for block in as_list(ctx.params.get("blocks")):
            block = int(block)
            if block < 4096 or block > MAX_RECORD or block % 1024 or block // 1024 > file_kib:
                continue
            argv = ["iozone"]
            for t in tests:
                argv += ["-i", t]
            argv += ["-r", f"{block // 1024}k", "-s", f"{file_kib}k", "-f", FILE, "-e"]
            mode = io_mode(ctx, op, block)
            if mode == "direct":
                argv.append("-I")
            out.append(Plan(tool="iozone", argv=tuple(argv), parser=parse_mb, primary=f"{figure}_mb_s",
                            matches={"op": op, "threads": 1, "block_bytes": block}, timeout_s=TIMEOUT_S,
                            typical_s=min(TIMEOUT_S,
                                          1.0 + len(tests) * file_kib * 1024 / IOZONE_RATE[mode == "direct"]),
                            what=f"IOzone {op}, {block // 1024} KiB records",
                            unavailable=None if mode != "cache_dropped" else
                            "ours ran this row buffered with the page cache dropped (io_mode cache_dropped); "
                            "IOzone reads the file it has just written, from the page cache, so its figure would "
                            "not compare like with like"))
    return out


def parse_mb(text: str) -> list[Metric]:
    """iozone's metrics (KB/s, 1 KB = 1024 B), each preceded by `<test>_mb_s` in MB/s (value x 1024 / 1e6),
    the unit of our disk kernel."""
    from . import parse_text  # the registry imports this module

    metrics = parse_text("iozone", text)["metrics"]
    out: list[Metric] = []
    for m in metrics:
        if m.get("unit") == "KB/s":
            extra = {k: v for k, v in m.items() if k not in ("name", "value", "unit")}
            out.append(metric(f"{m['name']}_mb_s", round_sig(m["value"] * 1024 / 1e6), "MB/s",
                              derived=f"iozone's {m['name']} in KB/s (1 KB = 1024 B) x 1024 / 1e6",
                              printed=m["value"], **extra))
        out.append(m)
    return out
