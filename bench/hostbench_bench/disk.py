"""./hostbench bench disk: our `disk` kernel against fio, direct I/O, matched parameters.

Each case runs our kernel and then fio with the same operation, block size, queue depth, direct flag,
file size, engine (psync at depth 1, io_uring above; libaio where io_uring is refused), warm-up and
measured time, in a directory on this host's disk. Throughput cases compare MB/s or IOPS; the
latency cases compare percentiles of the whole I/O time (fio's `lat`, from submission to completion,
with --lat_percentiles=1): a ratio of 1 is equal, within 0.9..1.1 is "within 10 %".

The directory: a fresh one under $HOSTBENCH_BENCH_DIR, else under .hostbench/bench/ in the repository
(a tmpfs /tmp would measure memory, and it may refuse O_DIRECT); the start event names the filesystem
and device. Both tools' files are removed at the end.
"""
import mmap
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from hostbench_common.reftools import fio
from hostbench_common.reftools.plan import Context
from hostbench_common.suites import BUILTIN
from hostbench_stack import STATE, settings

from hostbench_bench.common import (
    HBK,
    BenchReport,
    Pair,
    figure,
    hbk_events,
    parsed,
    progress,
    resolve,
    results,
    tool,
)
from hostbench_bench.common import run as run_cmd

FILE_SIZE = 1 << 30  # 1 GiB: modest, the disk is shared
DURATION_S = 5
LATENCY_S = 10  # at depth 1: a p99.9 rests on duration x IOPS / 1000 I/Os (~200 in 10 s here), so longer
WARMUP_S = 1
SETTLE_S = 20  # after each tool's sequential writes: let the host drain what it cached

# name, our op, fio rw, block, depth, metrics: (metric suffix, our result key, fio key, unit), our extra args
CASES = [
    ("seq_read_1M_qd16", "seq_read", "read", 1 << 20, 16, [("MB/s", "value", "bw", "MB/s")], ()),
    # the same with our buffers on 4 KiB pages, as fio's malloc'd buffers are: what the huge-page
    # buffers are worth on this host (a 1 MiB I/O on 4 KiB pages is 256 memory segments; a virtio
    # disk that takes 254 per request gets it split in two)
    ("seq_read_1M_qd16_4k_pages", "seq_read", "read", 1 << 20, 16, [("MB/s", "value", "bw", "MB/s")],
     ("--hugepages", "false")),
    ("rand_read_4k_qd1", "rand_read", "randread", 4096, 1,
     [("iops", "iops", "iops", "IOPS"), ("lat_p50", "lat_p50_us", "p50", "us"),
      ("lat_p99", "lat_p99_us", "p99", "us"), ("lat_p99.9", "lat_p999_us", "p99.9", "us")], ()),
    ("rand_write_4k_qd1", "rand_write", "randwrite", 4096, 1,
     [("iops", "iops", "iops", "IOPS"), ("lat_p50", "lat_p50_us", "p50", "us"),
      ("lat_p99", "lat_p99_us", "p99", "us"), ("lat_p99.9", "lat_p999_us", "p99.9", "us")], ()),
    ("rand_read_4k_qd32", "rand_read", "randread", 4096, 32,
     [("iops", "iops", "iops", "IOPS"), ("lat_p50", "lat_p50_us", "p50", "us"),
      ("lat_p99", "lat_p99_us", "p99", "us")], ()),
    ("rand_write_4k_qd32", "rand_write", "randwrite", 4096, 32,
     [("iops", "iops", "iops", "IOPS"), ("lat_p50", "lat_p50_us", "p50", "us"),
      ("lat_p99", "lat_p99_us", "p99", "us")], ()),
    # last, and followed by a pause: many GB of sequential writes leave the host flushing for a while
    ("seq_write_1M_qd16", "seq_write", "write", 1 << 20, 16, [("MB/s", "value", "bw", "MB/s")], ()),
]


def _workdir() -> Path:
    base = Path(settings.load().bench_dir or STATE / "bench")
    base.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="disk-", dir=base))


def ours(workdir: Path, op: str, block: int, depth: int, engine: str, file_size: int = FILE_SIZE,
         duration_s: float = DURATION_S, warmup_s: float = WARMUP_S,
         extra: tuple[str, ...] = ()) -> tuple[dict, dict]:
    events = hbk_events("disk", [
        "--workdir", str(workdir), "--op", op, "--blocks", str(block), "--iodepth", str(depth),
        "--direct", "true", "--engine", engine, "--file_size", str(file_size), "--threads", "1",
        "--repeats", "1", "--duration_s", str(duration_s), "--warmup_s", str(warmup_s), *extra],
        timeout=300)
    res = results(events)
    if len(res) != 1 or not res[0].get("verified"):
        raise RuntimeError(f"hbk disk: expected one verified result, got {res}")
    return events[0], res[0]


def duration_for(depth: int) -> int:
    return LATENCY_S if depth == 1 else DURATION_S


def fio_argv(path: Path, rw: str, block: int, depth: int, engine: str) -> list[str]:
    """The runner's fio job (hostbench_common.reftools.fio), one process on the whole file, with this bench's
    latency percentiles and a fresh random pattern; fio resolved on PATH."""
    return resolve(fio.argv(name="hostbench", filename=str(path), rw=rw, block=block, size=FILE_SIZE, iodepth=depth,
                            engine=engine, direct=True, runtime_s=duration_for(depth), ramp_s=WARMUP_S,
                            group_reporting=False,
                            extra=("--norandommap", "--randrepeat=0", "--overwrite=1", "--lat_percentiles=1",
                                   "--percentile_list=50:99:99.9")))


def theirs(argv: list[str], rw: str, path: Path, size: int = FILE_SIZE) -> dict:
    # a fresh file, as our kernel has at every start, written whole right before the measurement by
    # prewrite() rather than by fio's own layout pass: on this project's Zen 4 VM fio's 4 KiB QD32
    # random writes ran at 50-55 k IOPS on a file fio had laid out and at 97 k on one written with
    # 1 MiB direct writes, where our kernel (which writes its own file first) ran at 94-105 k; the
    # host reacts to how a file was first written, so both tools get a file written the same way.
    # fio then finds the file whole and writes nothing before its job (--overwrite=1 only lays out a
    # missing or short file)
    prewrite(path, size)

    metrics = parsed(fio.parse_percentiles, run_cmd(argv, timeout=300), "fio")
    side = "write" if "write" in rw else "read"
    return fio_figures(metrics, side)


def fio_figures(metrics: list[dict], side: str) -> dict:
    """fio's figures of one direction under the keys CASES name: bw, iops, p50, p99, p99.9 (its lat percentiles)."""
    return {"bw": figure(metrics, "bw", "fio", direction=side), "iops": figure(metrics, "iops", "fio", direction=side),
            **{f"p{q}": figure(metrics, "lat_percentile", "fio", direction=side, percentile=float(q))
               for q in ("50", "99", "99.9")}}


def prewrite(path: Path, size: int, chunk: int = 1 << 20) -> None:
    """Write `path` whole with 1 MiB O_DIRECT writes of random bytes (as `dd oflag=direct bs=1M`), then
    fsync: every block written and allocated, nothing left in the page cache."""
    path.unlink(missing_ok=True)
    buf = mmap.mmap(-1, chunk)  # page-aligned, as O_DIRECT needs
    buf.write(os.urandom(chunk))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o600)
    try:
        for _ in range(size // chunk):
            if os.writev(fd, [buf]) != chunk:
                raise RuntimeError(f"short write while pre-writing {path}")
        os.fsync(fd)
    finally:
        os.close(fd)
        buf.close()


def _engine_for(depth: int, async_engine: str) -> str:
    return "psync" if depth == 1 else async_engine


def run(pairs: int) -> BenchReport:
    tool("fio")
    if not HBK.exists():
        raise RuntimeError(f"{HBK} is missing: build the kernels first (make -C runner/kernels)")
    report = BenchReport("disk")
    workdir = _workdir()
    fio_file = workdir / "fio-bench.dat"
    try:
        # io_uring if this host allows it (the kernel says in its start event), else libaio
        start, _ = ours(workdir, "rand_read", 4096, 2, "auto", file_size=64 << 20, duration_s=0.2, warmup_s=0)
        async_engine = start["engine"]
        report.notes.append(
            f"directory {start['workdir']} on {start['filesystem']} ({start.get('device') or 'no device'}), "
            f"logical block {start['logical_block_bytes']} B; file {FILE_SIZE >> 20} MiB each; "
            f"{WARMUP_S} s warm-up + {DURATION_S} s per measurement ({LATENCY_S} s at depth 1); depth > 1 uses "
            f"{async_engine} "
            f"in both tools; latency = fio lat (submit to completion, --lat_percentiles=1); "
            f"order A B in even pairs, B A in odd ones; each run of either tool writes a fresh file first "
            f"(fio's: 1 MiB O_DIRECT writes of random bytes + fsync, not fio's layout pass); "
            f"{SETTLE_S} s pause after each sequential-write run")
        for i in range(pairs):
            for name, op, rw, block, depth, metrics, extra in CASES:
                engine = _engine_for(depth, async_engine)
                argv = fio_argv(fio_file, rw, block, depth, engine)
                got: dict[str, dict] = {}

                # this iteration's values bound as defaults (each step runs within the iteration anyway)
                def run_ours(got: dict[str, dict] = got, op: str = op, block: int = block, depth: int = depth,
                             engine: str = engine, extra: tuple[str, ...] = extra) -> None:
                    got["ours"] = ours(workdir, op, block, depth, engine, duration_s=duration_for(depth),
                                       extra=extra)[1]

                def run_theirs(got: dict[str, dict] = got, argv: list[str] = argv, rw: str = rw) -> None:
                    got["theirs"] = theirs(argv, rw, fio_file)

                # A B in even pairs, B A in odd ones: what one run leaves behind (the host flushing
                # a gigabyte of writes, a warm cache) falls on both tools alike
                for step in ((run_ours, run_theirs) if i % 2 == 0 else (run_theirs, run_ours)):
                    step()
                    if op == "seq_write":
                        time.sleep(SETTLE_S)
                mine, ref = got["ours"], got["theirs"]
                ref_text = (f"fio --rw={rw} --bs={block} --iodepth={depth} --direct=1 "
                            f"--ioengine={engine} --size=1G" + (f"; ours {' '.join(extra)}" if extra else ""))
                for suffix, our_key, fio_key, unit in metrics:
                    report.pairs.append(Pair(f"{name}_{suffix.replace('/', '')}" if suffix != "MB/s" else name,
                                             unit, float(mine[our_key]), float(ref[fio_key]), ref_text))
                    progress(report.pairs[-1])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return report


def quick_item() -> dict:
    """The Quick health check's disk item (hostbench_common.suites), its op list under the kernel's name."""
    item = next(i for i in BUILTIN["quick"].items if i.experiment == "disk")
    params = dict(item.params)
    params["op"] = params.pop("ops")
    return params


def run_quick(pairs: int) -> BenchReport:
    """The Quick health check's disk figures against fio at the same sizes and depth: every (op, block) of the
    suite's disk item, run by our kernel with the suite's parameters and by fio with the argv the runner's
    reference builder makes for that row (hostbench_common.reftools.fio.plans: --direct=1 where our row ran
    direct), on a file pre-written the same way. MB/s and the median latency, interleaved A B / B A."""
    tool("fio")
    if not HBK.exists():
        raise RuntimeError(f"{HBK} is missing: build the kernels first (make -C runner/kernels)")
    item = quick_item()
    size, duration, warmup = int(item["file_size"]), float(item["duration_s"]), float(item["warmup_s"])
    report = BenchReport("disk_quick")
    workdir = _workdir()
    fio_file = workdir / "fio-bench.dat"
    try:
        for i in range(pairs):
            for op in item["op"]:
                for block in item["blocks"]:
                    got: dict[str, tuple[dict, dict]] = {}

                    def run_ours(got: dict = got, op: str = op, block: int = block) -> None:
                        got["ours"] = ours(workdir, op, block, 1, "auto", file_size=size, duration_s=duration,
                                           warmup_s=warmup)

                    def run_theirs(got: dict = got, op: str = op, block: int = block) -> None:
                        start, res = got.get("ours") or ({}, {})
                        ctx = Context(experiment="disk", params={**item, "op": [op], "blocks": [block]},
                                      start=start or None, results=[res] if res else [])
                        [plan] = fio.plans(ctx)
                        argv = [f"--filename={fio_file}" if a.startswith("--filename=") else a for a in plan.argv]
                        argv += ["--norandommap", "--randrepeat=0", "--overwrite=1", "--lat_percentiles=1",
                                 "--percentile_list=50:99:99.9"]
                        rw = fio.RW[op]
                        got["theirs"] = ({"argv": argv}, theirs(resolve(argv), rw, fio_file, size))

                    # ours first in even pairs: fio's plan takes its mode from our row (its io_mode)
                    for step in (run_ours, run_theirs) if i % 2 == 0 else (run_theirs, run_ours):
                        step()
                        if op == "seq_write":
                            time.sleep(SETTLE_S / 2)
                    (start, mine), (meta, ref) = got["ours"], got["theirs"]
                    words = [a for a in meta["argv"] if a.split("=")[0] in ("--rw", "--bs", "--iodepth", "--direct",
                                                                             "--ioengine", "--size")]
                    ref_text = "fio " + " ".join(words) + f" (ours: io_mode {mine.get('io_mode')}, " \
                        f"engine {start.get('engine')})"
                    name = f"quick_{op}_{block // 1024}k"
                    for metric, unit, our_v, their_v in ((name, "MB/s", mine["value"], ref["bw"]),
                                                         (f"{name}_lat_p50", "us", mine["lat_p50_us"], ref["p50"])):
                        report.pairs.append(Pair(metric, unit, float(our_v), float(their_v), ref_text))
                        progress(report.pairs[-1])
        report.notes.append(f"the Quick health check's disk item: {item}; fio pre-written file of {size >> 20} MiB "
                            f"(1 MiB O_DIRECT writes + fsync), {SETTLE_S / 2:g} s pause after each sequential write")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return report


def _cli(argv: list[str]) -> int:  # pragma: no cover - manual use: python -m hostbench_bench.disk [quick] [pairs]
    if argv and argv[0] == "quick":
        run_quick(int(argv[1]) if len(argv) > 1 else 3).print()
        return 0
    run(int(argv[0]) if argv else 3).print()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(_cli(sys.argv[1:]))
