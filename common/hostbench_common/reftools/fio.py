"""fio output: JSON (--output-format=json or json+) and the normal text report.

Per job and direction (read, write, trim when it did I/O): `bw` in MB/s = 10^6 bytes/s, `iops`,
`lat_mean` and `lat_p99` in µs. From JSON, bw comes from `bw_bytes` (bytes/s) when fio gives it, else
from `bw`, which fio reports in KiB/s (1024 bytes/s): we convert (x1024/10^6) and say which in
`bw_from`. lat_mean is fio's total latency (`lat_ns`: submission + completion); lat_p99 comes from the
total-latency percentiles when fio recorded them (lat_percentiles=1), else from the completion-latency
ones (`clat_ns`, fio's default) with `lat_p99_of: "clat"`. The text report rounds bandwidth and IOPS
to three significant figures; JSON is the precise source and the one the runner asks for.

Refused: an error reported by fio (a job with a non-zero `error`/`err=`, or a "fio: ... error=" line);
truncated JSON; a text report without its "Run status group" summary (truncated); a run with no I/O.
"""

from __future__ import annotations

import errno
import os
import re
from typing import Any

from ._common import Metric, ParseError, first_json_object, looks_like_json, metric, not_this_tool, to_float, zip_strict
from .plan import Context, Plan, as_list

_DIRECTIONS = ("read", "write", "trim")
_FIO_ERROR = re.compile(r"^fio: .*(?:err=\s*\d+|error=).*$|^fio: failed .*$|^fio: .*(?:invalid|unknown).*$",
                        re.M | re.I)


def parse(text: str) -> tuple[str, list[Metric]]:
    if looks_like_json(text):
        return "json", _parse_json(text)
    return "text", _parse_text(text)


# --- JSON --------------------------------------------------------------------------------------------

def _parse_json(text: str) -> list[Metric]:
    obj, before = first_json_object(text, "fio")
    if "fio version" not in obj or "jobs" not in obj:
        raise not_this_tool("fio", text, "the JSON has no 'fio version' and 'jobs'")
    jobs = obj["jobs"]
    if not isinstance(jobs, list) or not jobs:
        raise ParseError("the fio JSON has no jobs")
    for job in jobs:
        err = job.get("error", 0)
        if err:
            raise ParseError(f"fio job {job.get('jobname')!r} reports error {err} ({_strerror(err)})"
                             + _context(before))
    bad = _FIO_ERROR.search(before)
    if bad:
        raise ParseError(f"fio reported an error before its JSON: {bad.group(0).strip()!r}")

    metrics: list[Metric] = []
    for job in jobs:
        name = str(job.get("jobname", "?"))
        for direction in _DIRECTIONS:
            d = job.get(direction)
            if not isinstance(d, dict) or not _did_io(d):
                continue
            metrics.extend(_json_direction(name, job.get("groupid"), direction, d))
    if not metrics:
        raise ParseError("the fio JSON shows no job that did any I/O")
    return metrics


def _did_io(d: dict[str, Any]) -> bool:
    return bool(d.get("total_ios") or d.get("io_bytes") or d.get("io_kbytes"))


def _num(d: dict[str, Any], key: str, where: str) -> float:
    if key not in d:
        raise ParseError(f"fio JSON {where}: no '{key}'")
    value = d[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(f"fio JSON {where}: '{key}' is {value!r}, not a number")
    return float(value)


def _json_direction(job: str, group: Any, direction: str, d: dict[str, Any]) -> list[Metric]:
    where = f"job {job!r} {direction}"
    keys = {"job": job, "direction": direction, "group": group}
    if "bw_bytes" in d:
        bw = _num(d, "bw_bytes", where) / 1e6
        bw_from = "bw_bytes (bytes/s)"
    else:
        bw = _num(d, "bw", where) * 1024 / 1e6
        bw_from = "bw (KiB/s) x 1024 / 10^6"
    out = [
        metric("bw", round(bw, 6), "MB/s", bw_from=bw_from, **keys),
        metric("iops", _num(d, "iops", where), "IO/s", **keys),
    ]
    lat = d.get("lat_ns")
    if isinstance(lat, dict) and lat.get("N", 1):
        out.append(metric("lat_mean", round(_num(lat, "mean", where + " lat_ns") / 1000.0, 6), "µs",
                          lat_of="lat", **keys))
    elif isinstance(d.get("lat"), dict):  # fio 2.x: lat in µs
        out.append(metric("lat_mean", _num(d["lat"], "mean", where + " lat"), "µs", lat_of="lat", **keys))
    p99, of = _json_p99(d)
    if p99 is not None:
        out.append(metric("lat_p99", round(p99 / 1000.0, 6), "µs", lat_p99_of=of, **keys))
    return out


def _json_p99(d: dict[str, Any]) -> tuple[float | None, str]:
    for key, of in (("lat_ns", "lat"), ("clat_ns", "clat")):
        block = d.get(key)
        if isinstance(block, dict) and isinstance(block.get("percentile"), dict):
            for pct, value in block["percentile"].items():
                try:
                    if abs(float(pct) - 99.0) < 1e-9:
                        return float(value), of
                except (TypeError, ValueError):
                    raise ParseError(f"fio JSON: bad percentile entry {pct!r}: {value!r}") from None
    clat = d.get("clat")
    if isinstance(clat, dict) and isinstance(clat.get("percentile"), dict):  # fio 2.x, in µs
        for pct, value in clat["percentile"].items():
            if abs(float(pct) - 99.0) < 1e-9:
                return float(value) * 1000.0, "clat"
    return None, ""


def _strerror(err: Any) -> str:
    try:
        code = int(err)
        return f"{errno.errorcode.get(code, '?')}: {os.strerror(code)}"
    except (TypeError, ValueError):
        return str(err)


def _context(before: str) -> str:
    line = before.strip().split("\n")[-1].strip() if before.strip() else ""
    return f"; fio said {line!r}" if line else ""


# --- normal text -------------------------------------------------------------------------------------

_JOB = re.compile(r"^(\S.*?): \(groupid=(\d+), jobs=(\d+)\): err=\s*(\d+)")
_DIR = re.compile(r"^\s+(read|write|trim)\s*: IOPS=([\d.]+)([kMG]?), BW=\S+ \(([\d.]+)([kMGT]?)B/s\)")
_LAT = re.compile(r"^\s+(lat|clat) \((nsec|usec|msec)\): min=\S+, max=\S+, avg=\s*([\d.]+),")
_PCT_HEAD = re.compile(r"^\s+(lat|clat) percentiles \((nsec|usec|msec)\):")
_PCT = re.compile(r"(\d+\.\d+)th=\[\s*(\d+)\]")
_SCALE = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_TO_US = {"nsec": 1e-3, "usec": 1.0, "msec": 1e3}


def _parse_text(text: str) -> list[Metric]:
    lines = text.split("\n")
    jobs = [(i, m) for i, line in enumerate(lines) if (m := _JOB.match(line))]
    bad = _FIO_ERROR.search(text)
    if not jobs:
        if bad:
            raise ParseError(f"fio reported an error: {bad.group(0).strip()!r}")
        raise not_this_tool("fio", text, "no job report ('NAME: (groupid=N, jobs=N): err= 0: ...')")
    for _i, m in jobs:
        if m.group(4) != "0":
            raise ParseError(f"fio job {m.group(1)!r} reports err={m.group(4)} ({_strerror(m.group(4))})")
    if bad:
        raise ParseError(f"fio reported an error: {bad.group(0).strip()!r}")
    status = [i for i, line in enumerate(lines) if re.match(r"^Run status group \d+ \(all jobs\):", line)]
    if not status or status[-1] < jobs[-1][0]:
        raise ParseError("no 'Run status group' summary after the last fio job: the output is truncated")

    metrics: list[Metric] = []
    bounds = [i for i, _m in jobs] + [status[-1]]
    for (start, m), stop in zip_strict(jobs, bounds[1:]):
        metrics.extend(_text_job(m.group(1), int(m.group(2)), lines[start + 1 : stop]))
    if not metrics:
        raise ParseError("the fio report shows no job that did any I/O")
    return metrics


def _text_job(job: str, group: int, block: list[str]) -> list[Metric]:
    # split the job block into its direction sections
    sections: list[tuple[str, re.Match[str], list[str]]] = []
    for line in block:
        m = _DIR.match(line)
        if m:
            sections.append((m.group(1), m, []))
        elif sections:
            sections[-1][2].append(line)
    out: list[Metric] = []
    for direction, m, body in sections:
        keys = {"job": job, "direction": direction, "group": group}
        iops = to_float(m.group(2), "fio IOPS") * _SCALE[m.group(3)]
        bw = to_float(m.group(4), "fio BW") * _SCALE[m.group(5)] / 1e6
        out.append(metric("bw", round(bw, 6), "MB/s", bw_from="text 'BW=... (N MB/s)', 3 significant figures", **keys))
        out.append(metric("iops", iops, "IO/s", **keys))
        lat: dict[str, float] = {}
        pct: dict[str, tuple[float, str]] = {}
        current: tuple[str, str] | None = None
        for line in body:
            lm = _LAT.match(line)
            if lm:
                lat[lm.group(1)] = to_float(lm.group(3), "fio latency") * _TO_US[lm.group(2)]
                current = None
                continue
            ph = _PCT_HEAD.match(line)
            if ph:
                current = (ph.group(1), ph.group(2))
                continue
            if current and line.strip().startswith("|"):
                for p, v in _PCT.findall(line):
                    if abs(float(p) - 99.0) < 1e-9:
                        pct[current[0]] = (float(v) * _TO_US[current[1]], current[0])
            elif current and line.strip():
                current = None
        if "lat" in lat:
            out.append(metric("lat_mean", round(lat["lat"], 6), "µs", lat_of="lat", **keys))
        elif "clat" in lat:
            out.append(metric("lat_mean", round(lat["clat"], 6), "µs", lat_of="clat", **keys))
        chosen = pct.get("lat") or pct.get("clat")
        if chosen:
            out.append(metric("lat_p99", round(chosen[0], 6), "µs", lat_p99_of=chosen[1], **keys))
    return out


# --- argv and the reference run --------------------------------------------------------------------------

RW = {"rw": "rw", "seq_read": "read", "seq_write": "write", "rand_read": "randread", "rand_write": "randwrite"}
FILE = "fio.dat"
MARGIN_S = 120.0  # beyond the job's own ramp and runtime
START_S = 2.0  # fio's start and the layout of its file (a fresh one per run, in the reference's own directory)


def secs(value: float) -> str:
    # fio takes whole seconds without a unit; a fraction goes to milliseconds
    return f"{int(value)}" if float(value).is_integer() else f"{int(round(value * 1000))}ms"


def argv(*, name: str, filename: str, rw: str, block: int, size: int, iodepth: int, engine: str, direct: bool,
         runtime_s: float, ramp_s: float, numjobs: int = 1, offset_increment: int | None = None,
         group_reporting: bool = True, extra: tuple[str, ...] = ()) -> list[str]:
    """One time-based fio job, JSON on stdout: `numjobs` processes, each on its own `size` bytes of the file
    (at offset_increment apart) when offset_increment is given; `extra` options last."""
    out = ["fio", f"--name={name}", f"--filename={filename}", f"--rw={rw}", f"--bs={block}", f"--size={size}"]
    if offset_increment is not None:
        out.append(f"--offset_increment={offset_increment}")
    out += [f"--numjobs={numjobs}", f"--iodepth={iodepth}", f"--ioengine={engine}", f"--direct={int(direct)}",
            "--time_based", f"--runtime={secs(runtime_s)}", f"--ramp_time={secs(ramp_s)}"]
    if group_reporting:
        out.append("--group_reporting")
    return out + ["--invalidate=1", "--output-format=json", *extra]


def engine(ctx: Context) -> str:
    chosen = ctx.params.get("engine")
    if chosen in ("io_uring", "libaio", "psync"):
        return str(chosen)
    started = (ctx.start or {}).get("engine")  # what the disk kernel chose under engine=auto
    if started in ("io_uring", "libaio", "psync"):
        return str(started)
    return "psync" if int(ctx.params.get("iodepth") or 1) == 1 else "io_uring"


def io_mode(ctx: Context, op: str, block: int) -> str:
    """How our disk kernel ran this (op, block): its results' `io_mode` ("direct", "cache_dropped", "buffered"),
    else the kernel's own rule from its start event and params: direct where it was asked (the default) and the
    block is a multiple of the logical block size, cache_dropped for the other blocks; with direct false, reads
    cache_dropped and writes buffered (the page cache's)."""
    for r in ctx.results:
        if r.get("op") == op and r.get("block_bytes") == block and r.get("io_mode"):
            return str(r["io_mode"])
    start = ctx.start or {}
    if start.get("memory_backed"):
        return "buffered"
    direct = start.get("direct", ctx.params.get("direct", True))
    if direct:
        lbs = int(start.get("logical_block_bytes") or 512)
        return "direct" if block % lbs == 0 and not start.get("direct_refused") else "cache_dropped"
    return "cache_dropped" if op in ("seq_read", "rand_read") else "buffered"


def plans(ctx: Context) -> list[Plan]:
    """One fio job per (op, block, threads) of our disk kernel: same block size, queue depth, I/O mode (io_mode:
    --direct=1 where ours ran direct; buffered with --end_fsync=1 for writes where ours ran cache_dropped, so
    that the writes reach the device inside the run as ours do), file size (split between the threads, each on
    its own region, as ours) and phase length, on a file in the reference's own directory."""
    ops = [op for op in as_list(ctx.params.get("op")) if op in RW]
    file_size = int(ctx.params.get("file_size") or 1 << 30)
    iodepth = int(ctx.params.get("iodepth") or 1)
    duration = float(ctx.params.get("duration_s") or 5)
    warmup = float(ctx.params.get("warmup_s") or 0)
    io_engine = engine(ctx)
    out = []
    for op in ops:
        for block in as_list(ctx.params.get("blocks")):
            for threads in as_list(ctx.params.get("threads")):
                region = file_size // threads
                region -= region % max(block, 4096)
                mode = io_mode(ctx, op, block)
                extra: tuple[str, ...] = ("--rwmixread=50",) if op == "rw" else ()
                if mode == "cache_dropped" and op not in ("seq_read", "rand_read"):
                    extra += ("--end_fsync=1",)
                job = argv(name=f"{op}-{block}-{threads}", filename=FILE, rw=RW[op], block=block, size=region,
                           offset_increment=region, numjobs=threads, iodepth=iodepth, engine=io_engine,
                           direct=mode == "direct", runtime_s=duration, ramp_s=warmup, extra=extra)
                out.append(Plan(tool="fio", argv=tuple(job), parser="fio",
                                matches={"op": op, "threads": threads, "block_bytes": block},
                                timeout_s=duration + warmup + MARGIN_S, primary="bw",
                                typical_s=duration + warmup + START_S,
                                what=f"fio {RW[op]}, {block} B blocks, {threads} job{'s' if threads > 1 else ''}"))
    return out


def parse_percentiles(text: str, levels: tuple[float, ...] = (50.0, 99.0, 99.9)) -> list[Metric]:
    """The fio metrics (`parse`, through parse_text), then one `lat_percentile` (µs, with its `percentile`)
    per level and direction that did I/O, from the JSON's lat_ns percentiles (a run with --lat_percentiles=1
    and --percentile_list): the whole I/O time, submission to completion. A level fio did not report is
    refused."""
    from . import parse_text  # the registry imports this module

    metrics = parse_text("fio", text)["metrics"]
    obj, _before = first_json_object(text, "fio")
    out: list[Metric] = []
    for job in obj["jobs"]:
        name = str(job.get("jobname", "?"))
        for direction in _DIRECTIONS:
            d = job.get(direction)
            if not isinstance(d, dict) or not _did_io(d):
                continue
            pct = (d.get("lat_ns") or {}).get("percentile") or {}
            for level in levels:
                value = next((v for k, v in pct.items() if abs(float(k) - level) < 1e-9), None)
                if value is None:
                    raise ParseError(f"fio gave no {level:g} percentile of lat: {sorted(pct)}")
                out.append(metric("lat_percentile", value / 1e3, "µs", percentile=level, lat_of="lat", job=name,
                                  direction=direction, group=job.get("groupid")))
    return [*metrics, *out]
