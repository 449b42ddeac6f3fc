"""Reference tools: the argv builders and their matching (pure), the likwid-bench parser, the phase
that runs them (fake tools on a PATH of our own), and the whole path into the finish payload."""

import json
import os
import stat
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hostbench_common.experiments import RUNS
from hostbench_common.reftools import ParseError, engine, fio, hpcc, likwid, stream, table
from hostbench_common.reftools.engine import ReferencePhase
from hostbench_common.reftools.plan import Context, Plan
from runner_fakes import CPU_PARAMS, FIXTURES, REFTOOLS, assignment, daemon_for, kernel_calls, pids_alive, run_once

from hostbench_runner.daemon import State
from hostbench_runner.errors import ParamError

LIKWID = FIXTURES / "reference"
HPCC_OUT = REFTOOLS / "hpcc-1.5.0-np2-N1000-1500.txt"
LIKWID_OUT = LIKWID / "likwid-bench-5.2-peakflops_avx512_fma-2t.txt"
GiB = 1 << 30


def cpu_ctx(op="fp64", threads=(1, 2), results=(), isa="avx512", **kw) -> Context:
    params = {"op": op, "threads": list(threads), "repeats": 1, "duration_s": 1, "warmup_s": 0}
    return Context(experiment="cpu", params=params, start={"isa": isa} if isa else None,
                   results=[dict(r) for r in results], cpus=kw.pop("cpus", 2),
                   mem_bytes=kw.pop("mem_bytes", 24 * GiB), is_root=kw.pop("is_root", False), **kw)


# --- CPU builders -------------------------------------------------------------------------------------


@pytest.mark.parametrize("peak, mem, procs, cpus, n", [
    (55.0, 24 * GiB, 1, 2, 4032),  # this VM, 1 thread: hpcc's per-process share bounds N (4096 -> NB multiple)
    (0.5, 24 * GiB, 1, 2, 3456),  # a slow host: HPL's 60 s at the peak bounds N (3557)
    (3000.0, 512 * GiB, 64, 64, 19968),  # a big host: 20000 at most
    (55.0, 256 << 20, 1, 2, 2880),  # little RAM: a quarter of it for the matrix (2896)
    (55.0, 64 << 20, 1, 2, 1344),  # even less: below 2000 rather than swap
    (55.0, None, 1, 2, 4032),  # RAM unknown: the other bounds still hold
])
def test_hpl_problem_size(peak, mem, procs, cpus, n):
    got = hpcc.hpl_problem_size(peak, mem, procs, cpus)
    assert got == n and got % hpcc.HPL_NB == 0
    assert 2 / 3 * got**3 / (peak * 1e9) <= hpcc.HPL_TARGET_S * 1.01  # HPL at most ~60 s at the peak


def test_hpcc_input_file_is_hpls_format():
    lines = hpcc.hpcc_input(4032, 192, 1, 2).splitlines()
    assert len(lines) == 36
    values = [line.split()[0] for line in lines[2:31]]
    assert values[3:10] == ["4032", "1", "192", "0", "1", "1", "2"]  # N, #NB, NB, PMAP, #grids, P, Q
    assert lines[31].startswith("##### This line (no. 32) is ignored")
    assert lines[32].split()[0] == "0"  # no extra PTRANS sizes: PTRANS takes N/2 from HPL


def test_hpcc_plans_one_run_per_thread_count_from_the_measured_peak():
    results = [{"threads": 1, "value": 55.0, "op": "fp64"}, {"threads": 2, "value": 110.0, "op": "fp64"}]
    plans = hpcc.plans(cpu_ctx(results=results, is_root=True))
    assert [p.argv for p in plans] == [
        ("mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "1", "hpcc"),
        ("mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", "hpcc"),
    ]
    one = plans[0]
    assert one.tool == "hpcc" and one.needs == ("hpcc",) and one.output == "hpccoutf.txt" and one.parser == "hpcc"
    assert one.env["OMP_NUM_THREADS"] == "1" and one.env["OPENBLAS_NUM_THREADS"] == "1"
    assert dict(one.matches) == {"op": "fp64", "threads": 1, "block_bytes": None}
    assert one.files["hpccinf.txt"].splitlines()[5].split()[0] == "4032"
    assert plans[1].files["hpccinf.txt"].splitlines()[11].split()[0] == "2"  # Q = threads, P = 1
    assert "--allow-run-as-root" not in hpcc.plans(cpu_ctx())[0].argv


def test_hpcc_only_for_fp64():
    assert hpcc.plans(cpu_ctx(op="fp32")) == [] and hpcc.plans(cpu_ctx(op="int32")) == []


@pytest.mark.parametrize("op, isa, inventory_isa, test", [
    ("fp64", "avx512", None, "peakflops_avx512_fma"),
    ("fp32", "avx2", None, "peakflops_sp_avx_fma"),
    ("fp64", "sse2", None, "peakflops_sse"),
    ("fp32", "scalar", None, "peakflops_sp"),
    ("fp64", None, "avx2", "peakflops_avx_fma"),  # no start event: the host's best ISA
    ("fp64", None, None, "peakflops"),
])
def test_likwid_test_follows_our_kernels_isa(op, isa, inventory_isa, test):
    inv = {"cpu": {"best_isa": inventory_isa}} if inventory_isa else None
    plans = likwid.plans(cpu_ctx(op=op, isa=isa, threads=(1, 4), inventory=inv))
    assert [p.argv for p in plans] == [("likwid-bench", "-t", test, "-W", "N:16kB:1"),
                                       ("likwid-bench", "-t", test, "-W", "N:64kB:4")]
    assert plans[1].matches == {"op": op, "threads": 4, "block_bytes": None} and plans[1].primary == "peakflops"


def test_the_table_maps_cpu_and_nothing_for_traces_or_int32():
    plans, broken = table.plan(cpu_ctx())
    assert [(p.tool, p.matches["threads"]) for p in plans] == [
        ("hpcc", 1), ("hpcc", 2), ("likwid-bench", 1), ("likwid-bench", 2)]
    assert broken == []
    # no tool for INT32: one "none" plan saying which tools exist and why none applies (issue 26)
    (none,), broken = table.plan(cpu_ctx(op="int32"))
    assert broken == [] and none.tool == "none" and none.matches == {"op": "int32", "threads": None, "block_bytes": None}
    assert none.no_tool is not None and "no reference tool measures int32" in none.no_tool
    assert "hpcc (HPL: FP64 only)" in none.no_tool and "likwid-bench (peakflops: FP64 and FP32" in none.no_tool
    trace = Context(experiment="cpu_trace", params={"op": "fp64", "threads": [2], "duration_s": 600})
    (none,), _ = table.plan(trace)
    assert none.no_tool == "no reference tool measures fp64. Tools of this experiment: none for this experiment"
    assert table.plan(Context(experiment="network_serve", params={"op": "tcp_stream"})) == ([], [])
    # every tool the experiment table names has a builder for the runs that name it
    for kind in RUNS:
        assert [tool for tool, _ in table.builders(kind)] == list(RUNS[kind].references)
    assert RUNS["cpu_trace"].references == () and RUNS["network_serve"].references == ()


def test_a_broken_builder_becomes_a_failed_entry(monkeypatch):
    def broken(ctx):
        raise KeyError("threads")

    monkeypatch.setitem(table.TOOLS, "hpcc", table.Tool(broken))
    monkeypatch.setitem(table.TOOLS, "likwid-bench", table.Tool(lambda ctx: []))
    plans, failed = table.plan(cpu_ctx())
    assert plans == [] and failed[0]["tool"] == "hpcc" and failed[0]["status"] == "failed"
    assert "cannot plan hpcc: KeyError" in failed[0]["reason"]


# --- memory and disk builders (their experiments are not wired yet) ---------------------------------------


def test_stream_builder():
    ctx = Context(experiment="memory", params={"op": "stream_triad", "threads": [1, 4], "array_size": 0})
    plans = stream.plans(ctx)
    assert [p.argv for p in plans] == [("stream",), ("stream",)]
    assert plans[1].env["OMP_NUM_THREADS"] == "4" and plans[1].parser == "stream" and plans[1].primary == "triad"
    assert plans[1].matches == {"op": "stream_triad", "threads": 4, "block_bytes": None}
    assert stream.plans(Context(experiment="memory", params={"op": "stream_copy_nt", "threads": [2]}))[0].primary == "copy"
    assert stream.plans(Context(experiment="memory", params={"op": "rand_read", "threads": [1]})) == []
    # no `stream` binary: hpcc's STREAM in its place, as many processes as threads, HPL's N sizing its vectors
    ctx = Context(experiment="memory", params={"op": "stream_triad", "threads": [2, 4]}, start={"array_size": 16777216},
                  mem_bytes=24 * GiB, cpus=2)
    alt, over = (p.instead for p in stream.plans(ctx))
    assert over is not None and over.unavailable == ("hpcc's STREAM runs one process per CPU, at most 2: 4 processes "
                                                     "on 2 CPUs would share them (the row is oversubscribed)")
    assert alt is not None and alt.tool == "hpcc" and alt.argv == ("mpirun", "--oversubscribe", "-np", "2", "hpcc")
    assert alt.primary == "triad" and alt.unavailable is None and "HPL N=8064" in (alt.note or "")
    assert "N=8064" not in alt.files["hpccinf.txt"] and alt.files["hpccinf.txt"].splitlines()[5].split()[0] == "8064"
    small = stream.plans(Context(experiment="memory", params={"op": "stream_triad", "threads": [1]},
                                 start={"array_size": 16777216}, mem_bytes=512 << 20))[0].instead
    assert small is not None and "more than 50% of this host's 0.5 GiB" in (small.unavailable or "")


def test_memory_ops_get_their_reference_or_the_reason():
    """copy: STREAM's Copy (named as a sweep of whole arrays); read: likwid-bench load, write: store_mem, over our
    buffer; rand_*, latency: "none" with the reason (issue 26: no op's reference vanishes)."""
    start = {"buffer_bytes": 134217728, "isa": "avx512", "stores": "auto"}

    def planned(op):
        return table.plan(Context(experiment="memory", params={"op": op, "threads": [1, 2]}, start=start))[0]

    copy = planned("copy")
    assert [(p.tool, p.matches["threads"], p.primary) for p in copy] == [("stream", 1, "copy"), ("stream", 2, "copy")]
    assert "STREAM's Copy sweeps whole arrays" in (copy[0].note or "")
    read = planned("read")
    assert [p.argv for p in read] == [("likwid-bench", "-t", "load_avx512", "-W", "N:134217728B:1"),
                                      ("likwid-bench", "-t", "load_avx512", "-W", "N:134217728B:2")]
    assert planned("write")[0].argv[2] == "store_mem_avx512"
    for op in ("rand_read", "rand_write", "latency"):
        (none,) = planned(op)
        assert none.tool == "none" and (none.no_tool or "").startswith(f"no reference tool measures {op}: ")


def test_stream_comes_from_hpcc_where_no_stream_binary_exists(tools, tmp_path):
    """The phase runs hpcc in place of the missing `stream`: its StarSTREAM figure x processes beside our row,
    with the note saying so; with neither installed, the package that brings it."""
    ctx = Context(experiment="memory", params={"op": "stream_copy", "threads": [2]}, start={"array_size": 16777216},
                  mem_bytes=24 * GiB, cpus=2)
    plans, _ = table.plan(ctx)
    (got,) = run_phase(plans, tools(hpcc="ok", mpirun="ok"), tmp_path).report()
    assert got["tool"] == "hpcc" and got["status"] == "ok" and "STREAM from hpcc" in got["note"]
    summary = dict(line.split("=", 1) for line in HPCC_OUT.read_text().splitlines() if "=" in line)
    assert got["metrics"][0]["name"] == "copy" and got["metrics"][0]["primary"] is True
    assert got["metrics"][0]["value"] == pytest.approx(float(summary["StarSTREAM_Copy"]) * 1000 * 2)
    (empty := tmp_path / "nothing-installed").mkdir()
    (gone,) = run_phase(plans, empty, tmp_path).report()
    assert (gone["tool"], gone["status"]) == ("hpcc", "unavailable")
    assert gone["reason"] == "hpcc is not installed on this host (Debian: apt install hpcc)"
    assert "no stream binary on this host" in gone["note"]


def test_no_tool_and_nearest_size_reach_the_entries(tools, tmp_path):
    (none,) = run_phase(table.plan(cpu_ctx(op="int32"))[0], tools(), tmp_path).report()
    assert none["status"] == "none" and none["tool"] == "none" and none["matches"]["op"] == "int32"
    assert none["reason"].startswith("no reference tool measures int32")


DISK = {"op": ["seq_read", "rand_write"], "blocks": [4096, 1048576], "threads": [1, 2], "direct": True,
        "iodepth": 16, "file_size": GiB, "duration_s": 5, "warmup_s": 1, "engine": "auto"}


def test_fio_builder_matches_every_row_of_the_disk_kernel():
    plans = fio.plans(Context(experiment="disk", params=DISK, start={"engine": "io_uring"}))
    assert len(plans) == 8
    assert {(p.matches["op"], p.matches["block_bytes"], p.matches["threads"]) for p in plans} == {
        (op, b, t) for op in DISK["op"] for b in DISK["blocks"] for t in DISK["threads"]}
    p = next(p for p in plans if p.matches == {"op": "rand_write", "threads": 2, "block_bytes": 4096})
    assert p.argv == (
        "fio", "--name=rand_write-4096-2", "--filename=fio.dat", "--rw=randwrite", "--bs=4096",
        "--size=536870912", "--offset_increment=536870912", "--numjobs=2", "--iodepth=16", "--ioengine=io_uring",
        "--direct=1", "--time_based", "--runtime=5", "--ramp_time=1", "--group_reporting", "--invalidate=1",
        "--output-format=json",
    )
    assert p.parser == "fio" and p.primary == "bw" and p.timeout_s == 5 + 1 + 120


def test_fio_builder_defaults_and_fractions():
    params = {"op": ["rw"], "blocks": [8], "threads": [3], "direct": False, "iodepth": 1,
              "file_size": 1 << 20, "duration_s": 0.5, "warmup_s": 0}
    argv = fio.plans(Context(experiment="disk", params=params))[0].argv
    assert "--rw=rw" in argv and "--rwmixread=50" in argv and "--ioengine=psync" in argv and "--direct=0" in argv
    assert "--runtime=500ms" in argv and "--ramp_time=0" in argv
    assert "--size=348160" in argv  # (1 MiB / 3) down to a 4 KiB multiple: each thread its own region
    assert fio.engine(Context(experiment="disk", params={"iodepth": 8})) == "io_uring"
    assert fio.engine(Context(experiment="disk", params={"iodepth": 8, "engine": "libaio"})) == "libaio"


def test_fio_runs_each_row_in_the_mode_ours_ran():
    """Like with like (issue 26): --direct=1 where our row ran O_DIRECT (the kernel's default, even when the job's
    params do not name `direct`), buffered with the writes flushed where ours dropped the cache (a block direct
    I/O cannot move), and what our results say wins over the rule."""
    params = {"op": ["seq_read", "seq_write"], "blocks": [8, 4096], "threads": [1], "iodepth": 1,
              "file_size": 1 << 20, "duration_s": 1, "warmup_s": 0}
    start = {"engine": "psync", "direct": True, "logical_block_bytes": 512}
    by = {(p.matches["op"], p.matches["block_bytes"]): p.argv
          for p in fio.plans(Context(experiment="disk", params=params, start=start))}
    assert "--direct=1" in by["seq_read", 4096] and "--direct=1" in by["seq_write", 4096]
    assert "--direct=0" in by["seq_read", 8] and "--end_fsync=1" not in by["seq_read", 8]
    assert "--direct=0" in by["seq_write", 8] and "--end_fsync=1" in by["seq_write", 8]
    results = [{"op": "seq_read", "block_bytes": 4096, "io_mode": "cache_dropped"}]
    argv = fio.plans(Context(experiment="disk", params=params, start=start, results=results))[1].argv
    assert "--direct=0" in argv and "--bs=4096" in argv and "--rw=read" in argv
    assert fio.io_mode(Context(experiment="disk", params={**params, "direct": False}), "seq_write", 4096) == "buffered"
    assert fio.io_mode(Context(experiment="disk", params=params, start={**start, "memory_backed": True}),
                       "seq_read", 4096) == "buffered"


# --- the reference flag is a parameter like the others ----------------------------------------------------


def test_reference_flag_is_validated_as_a_boolean(cpu_schema):
    exp = RUNS["cpu"]
    for bad in ("yes", 1, None, [True]):
        with pytest.raises(ParamError, match="reference: expected boolean"):
            exp.kernel_params({**CPU_PARAMS, "reference": bad}, cpu_schema)
    params = exp.kernel_params({**CPU_PARAMS, "reference": True}, cpu_schema)
    assert "reference" not in params and "reference" not in " ".join(exp.argv("hbk", params))
    assert exp.wants_reference({"reference": True}) and not exp.wants_reference({"reference": False})
    assert not exp.wants_reference({})
    trace = RUNS["cpu_trace"].kernel_params({"op": "fp64", "threads": 2, "reference": False}, cpu_schema)
    assert "reference" not in trace


# --- the likwid-bench parser -------------------------------------------------------------------------------


def test_likwid_parser_on_real_outputs():
    got = likwid.parse(LIKWID_OUT.read_text())
    assert [m["name"] for m in got] == ["peakflops", "bandwidth"]
    flops = got[0]
    assert flops["value"] == pytest.approx(51.87409) and flops["unit"] == "GFLOP/s"
    assert flops["printed"] == 51874.09 and flops["test"] == "peakflops_avx512_fma" and flops["threads"] == 2
    sp = likwid.parse((LIKWID / "likwid-bench-5.2-peakflops_sp_avx512_fma-1t.txt").read_text())
    assert sp[0]["value"] == pytest.approx(81.19655) and sp[0]["threads"] == 1
    copy = likwid.parse((LIKWID / "likwid-bench-5.2-copy_mem_avx512-2t.txt").read_text())
    assert [m["name"] for m in copy] == ["bandwidth"] and copy[0]["value"] == 13840.47  # 0 MFlops/s: no flops


@pytest.mark.parametrize("text, message", [
    ((LIKWID / "likwid-bench-5.2-error-unknown-test.txt").read_text(), "reported an error: Error: Unknown test"),
    (LIKWID_OUT.read_text().split("MFlops/s")[0], "no MFlops/s or MByte/s line"),
    (HPCC_OUT.read_text(), "not likwid-bench output"),
    (LIKWID_OUT.read_text() * 2, "2 likwid-bench reports"),
    (LIKWID_OUT.read_text().replace("51874.09", "-3"), "not a measured figure"),
])
def test_likwid_parser_refuses(text, message):
    with pytest.raises(ParseError, match=message):
        likwid.parse(text)


# --- the phase: fake tools on a PATH of our own -------------------------------------------------------------

FAKE_TOOL = r'''
import json, os, sys, time
NAME, MODE, LOG, FIXTURE = {name!r}, {mode!r}, {log!r}, {fixture!r}
with open(LOG, "a") as fh:
    fh.write(json.dumps({{"tool": NAME, "argv": sys.argv, "cwd": os.getcwd(), "pid": os.getpid(),
                         "omp": os.environ.get("OMP_NUM_THREADS"),
                         "files": sorted(os.listdir("."))}}) + "\n")
if NAME == "mpirun":
    args = sys.argv[1:]
    while args[0].startswith("--") or args[0] == "-np":
        args = args[2:] if args[0] == "-np" else args[1:]
    os.execv(args[0], args)
if MODE == "hang":
    while True:
        time.sleep(1)
if MODE == "slow":  # a tool that takes a moment, so that the runner reports it running
    time.sleep(1.0)
if MODE == "fail":
    sys.stderr.write(NAME + ": cannot allocate the matrix\n")
    sys.exit(3)
text = open(FIXTURE).read() if FIXTURE else "garbage\n"
if NAME == "hpcc":
    assert os.path.exists("hpccinf.txt")
    open("hpccoutf.txt", "w").write(text)
else:
    sys.stdout.write(text)
'''


@pytest.fixture
def tools(tmp_path):
    """tools(hpcc=mode, mpirun=..., **) -> PATH directory holding fake tools (mode 'ok', 'fail', 'hang',
    'garbage'); a tool not named is not installed. Their calls are logged to <dir>/calls.jsonl."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fixtures = {"hpcc": HPCC_OUT, "likwid-bench": LIKWID_OUT, "mpirun": None}

    def make(**modes: str) -> Path:
        for key, mode in modes.items():
            name = key.replace("_", "-")
            path = bindir / name
            fixture = "" if mode == "garbage" else str(fixtures.get(name) or "")
            body = FAKE_TOOL.format(name=name, mode=mode, log=str(bindir / "calls.jsonl"), fixture=fixture)
            path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
            path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return bindir

    return make


def calls(bindir: Path) -> list[dict]:
    log = bindir / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def run_phase(plans, bindir, tmp_path, deadline_s=60.0, broken=None):
    phase = ReferencePhase(list(plans), tmp_path / "work" / "references", time.monotonic() + deadline_s,
                           path=str(bindir), broken=broken)
    limit = time.monotonic() + 30
    while not phase.done and time.monotonic() < limit:
        phase.step(0.05)
    phase.close()
    return phase


def test_phase_runs_hpcc_and_likwid_and_parses_their_output(tools, tmp_path):
    bindir = tools(hpcc="ok", mpirun="ok", likwid_bench="ok")
    plans, _ = table.plan(cpu_ctx(threads=(2,)))
    phase = run_phase(plans, bindir, tmp_path)
    hpcc, likwid = phase.report()
    assert hpcc["status"] == "ok" and hpcc["reason"] is None
    assert hpcc["argv"] == [str(bindir / "mpirun"), "--oversubscribe", "-np", "2", str(bindir / "hpcc")]
    assert hpcc["matches"] == {"op": "fp64", "threads": 2, "block_bytes": None}
    assert hpcc["metrics"][0]["name"] == "hpl_gflops" and hpcc["metrics"][0]["primary"] is True
    assert hpcc["metrics"][0]["value"] == pytest.approx(4.80779)  # the fixture's HPL_Tflops 0.00480779 x 1000
    assert likwid["status"] == "ok" and likwid["metrics"][0]["value"] == pytest.approx(51.87409)
    assert likwid["argv"] == [str(bindir / "likwid-bench"), "-t", "peakflops_avx512_fma", "-W", "N:32kB:2"]
    seen = calls(bindir)
    assert [c["tool"] for c in seen] == ["mpirun", "hpcc", "likwid-bench"]
    assert seen[1]["omp"] == "1" and "hpccinf.txt" in seen[1]["files"]
    assert seen[1]["cwd"].startswith(str(tmp_path / "work" / "references"))
    assert not (tmp_path / "work" / "references").exists()  # cleaned after


def test_missing_tools_are_unavailable_not_errors(tools, tmp_path):
    plans, _ = table.plan(cpu_ctx(threads=(1,)))
    got = run_phase(plans, tools(), tmp_path).report()
    assert [(e["tool"], e["status"], e["reason"]) for e in got] == [
        ("hpcc", "unavailable", "hpcc is not installed on this host (Debian: apt install hpcc)"),
        ("likwid-bench", "unavailable", "likwid-bench is not installed on this host (Debian: apt install likwid)"),
    ]
    assert got[0]["argv"] == ["mpirun", "--oversubscribe", "-np", "1", "hpcc"] and got[0]["metrics"] == []
    got = run_phase(plans[:1], tools(hpcc="ok"), tmp_path).report()
    assert got[0]["reason"] == "mpirun is not installed on this host (Debian: apt install openmpi-bin) (hpcc needs it)"


@pytest.mark.parametrize("mode, reason", [
    ("fail", "hpcc failed (exit code 3); stderr: hpcc: cannot allocate the matrix"),
    ("garbage", "hpcc output unreadable: not hpcc output"),
])
def test_a_failing_tool_is_reported_failed_with_its_reason(tools, tmp_path, mode, reason):
    plans, _ = table.plan(cpu_ctx(threads=(1,)))
    got = run_phase(plans[:1], tools(hpcc=mode, mpirun="ok"), tmp_path).report()
    assert got[0]["status"] == "failed" and got[0]["reason"].startswith(reason) and got[0]["metrics"] == []


def _hanging_plan(timeout_s: float) -> Plan:
    return Plan(tool="likwid-bench", argv=("likwid-bench", "-t", "peakflops"), parser=likwid.parse,
                matches={"op": "fp64", "threads": 1}, timeout_s=timeout_s)


def test_a_hanging_tool_is_killed_at_its_timeout(tools, tmp_path):
    bindir = tools(likwid_bench="hang")
    started = time.monotonic()
    got = run_phase([_hanging_plan(0.5)], bindir, tmp_path).report()
    assert got[0]["status"] == "failed" and got[0]["reason"] == "likwid-bench stopped: timed out after 0 s"
    assert time.monotonic() - started < 10
    assert pids_alive([c["pid"] for c in calls(bindir)]) == []


def test_no_tool_starts_too_close_to_the_deadline(tools, tmp_path):
    got = run_phase([_hanging_plan(60)], tools(likwid_bench="ok"), tmp_path, deadline_s=3.0).report()
    assert got[0]["status"] == "failed" and got[0]["reason"] == "not run: 1 s left before the run's deadline"
    assert calls(tools()) == []


def test_abort_stops_the_running_tool_and_marks_the_rest(tools, tmp_path):
    bindir = tools(likwid_bench="hang")
    phase = ReferencePhase([_hanging_plan(60), _hanging_plan(60)], tmp_path / "refs", time.monotonic() + 60,
                           path=str(bindir))
    while not calls(bindir):
        phase.step(0.05)
    phase.abort("runner stopped")
    phase.close()
    assert phase.done
    assert [e["reason"] for e in phase.report()] == ["likwid-bench stopped: runner stopped",
                                                     "not run: runner stopped"]
    assert pids_alive([c["pid"] for c in calls(bindir)]) == []


# --- the whole path: daemon, fake kernel, fake server, fake tools --------------------------------------------


def test_reference_run_lands_in_the_finish_payload(server, settings_for, fake_kernel, tools, monkeypatch):
    bindir = tools(hpcc="ok", mpirun="ok", likwid_bench="ok")
    monkeypatch.setenv("PATH", str(bindir))
    kbin = fake_kernel("ok")
    _, finish = run_once(server, settings_for(server.url, kbin),
                         assignment(run_id=50, params={**CPU_PARAMS, "reference": True}))
    assert finish["status"] == "succeeded" and finish["reason"] is None
    refs = finish["references"]
    assert [(r["tool"], r["matches"]["threads"], r["status"]) for r in refs] == [
        ("hpcc", 1, "ok"), ("hpcc", 2, "ok"), ("likwid-bench", 1, "ok"), ("likwid-bench", 2, "ok")]
    assert refs[0]["metrics"][0]["name"] == "hpl_gflops" and refs[0]["matches"]["op"] == "fp64"
    assert refs[2]["argv"][1:] == ["-t", "peakflops_avx_fma", "-W", "N:16kB:1"]  # the fake kernel ran avx2
    assert "--allow-run-as-root" in refs[0]["argv"] or os.geteuid() != 0
    assert kernel_calls(kbin)[0]["argv"][-2:] == ["--warmup_s", "0"]  # reference never reaches the kernel
    assert server.leases  # the lease was held while the tools ran


def test_the_runner_reports_each_reference_phase_to_the_server(server, settings_for, fake_kernel, tools,
                                                               monkeypatch):
    """Issue 26: while a reference tool runs, the lease renewals carry the phase (which tool, i of n, what it runs,
    since when, its typical time and its cap); before, the kernel's."""
    monkeypatch.setenv("PATH", str(tools(hpcc="slow", mpirun="ok", likwid_bench="slow")))
    _, finish = run_once(server, settings_for(server.url, fake_kernel("ok")),
                         assignment(params={**CPU_PARAMS, "threads": [2], "reference": True}))
    assert finish is not None and [r["status"] for r in finish["references"]] == ["ok", "ok"]
    phases = [body["phase"] for _, body in server.leases if body.get("phase")]
    kinds = [(p["kind"], p.get("tool")) for p in phases]
    assert kinds[0] == ("kernel", None) and phases[0]["what"] == "cpu kernel, fp64"
    assert ("reference", "hpcc") in kinds and ("reference", "likwid-bench") in kinds
    hpl = next(p for p in phases if p.get("tool") == "hpcc")
    assert (hpl["index"], hpl["of"]) == (1, 2) and hpl["what"].startswith("HPL N = ")
    assert hpl["what"].endswith(", 2 processes") and hpl["typical_s"] > 0 and hpl["cap_s"] > 0
    assert abs(hpl["started_at"] - time.time()) < 60
    lk = next(p for p in phases if p.get("tool") == "likwid-bench")
    assert (lk["index"], lk["of"]) == (2, 2) and lk["what"].startswith("likwid-bench peakflops")
    assert lk["what"].endswith(", 2 threads")


def test_without_the_flag_no_tool_runs(server, settings_for, fake_kernel, tools, monkeypatch):
    bindir = tools(hpcc="ok", mpirun="ok", likwid_bench="ok")
    monkeypatch.setenv("PATH", str(bindir))
    _, finish = run_once(server, settings_for(server.url, fake_kernel("ok")),
                         assignment(params={**CPU_PARAMS, "reference": False}))
    assert "references" not in finish and calls(bindir) == []


def test_missing_tools_leave_the_run_succeeded(server, settings_for, fake_kernel, tools, monkeypatch):
    monkeypatch.setenv("PATH", str(tools()))
    _, finish = run_once(server, settings_for(server.url, fake_kernel("ok")),
                         assignment(params={**CPU_PARAMS, "threads": [1], "reference": True}))
    assert finish["status"] == "succeeded"
    assert [(r["tool"], r["status"], r["reason"]) for r in finish["references"]] == [
        ("hpcc", "unavailable", "hpcc is not installed on this host (Debian: apt install hpcc)"),
        ("likwid-bench", "unavailable", "likwid-bench is not installed on this host (Debian: apt install likwid)")]


def test_no_reference_after_a_failed_kernel(server, settings_for, fake_kernel, tools, monkeypatch):
    bindir = tools(hpcc="ok", mpirun="ok", likwid_bench="ok")
    monkeypatch.setenv("PATH", str(bindir))
    _, finish = run_once(server, settings_for(server.url, fake_kernel("exit1")),
                         assignment(params={**CPU_PARAMS, "reference": True}))
    assert finish["status"] == "failed" and finish["references"] == [] and calls(bindir) == []


def test_bad_reference_flag_is_refused_before_the_kernel(server, settings_for, fake_kernel):
    kbin = fake_kernel("ok")
    _, finish = run_once(server, settings_for(server.url, kbin), assignment(params={**CPU_PARAMS, "reference": "yes"}))
    assert finish["status"] == "failed" and finish["reason"].startswith("invalid params: reference: expected boolean")
    assert not any(c["argv"][-1] != "--describe" for c in kernel_calls(kbin))


def test_lease_409_during_references_stops_the_tool_without_finish(server, settings_for, fake_kernel, tools,
                                                                  monkeypatch):
    bindir = tools(hpcc="hang", mpirun="ok", likwid_bench="ok")
    monkeypatch.setenv("PATH", str(bindir))
    settings = settings_for(server.url, fake_kernel("ok"))
    original = server.route

    def route(method, path, query, body, auth):
        if path.endswith("/lease") and any(c["tool"] == "hpcc" for c in calls(bindir)):
            return 409, {"detail": "cancelled"}
        return original(method, path, query, body, auth)

    server.route = route
    started = time.monotonic()
    d, finish = run_once(server, settings, assignment(run_id=60, params={**CPU_PARAMS, "reference": True}))
    assert finish is None and time.monotonic() - started < 20
    assert pids_alive([c["pid"] for c in calls(bindir)]) == []
    assert list(settings.work_dir.iterdir()) == []


def test_deadline_during_references_keeps_the_kernels_result(server, settings_for, fake_kernel, tools,
                                                             monkeypatch):
    bindir = tools(hpcc="hang", mpirun="ok", likwid_bench="ok")
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setattr(engine, "MIN_TIME_S", 0.5)
    monkeypatch.setattr(engine, "FINISH_MARGIN_S", 0.5)
    _, finish = run_once(server, settings_for(server.url, fake_kernel("ok")),
                         assignment(params={**CPU_PARAMS, "threads": [1], "reference": True}, deadline_s=2.5))
    assert finish["status"] == "succeeded" and len(finish["results"]) == 1
    hpcc, likwid = finish["references"]
    assert hpcc["status"] == "failed" and hpcc["reason"].startswith("hpcc stopped: timed out after")
    assert likwid["status"] == "failed" and likwid["reason"].startswith("not run:")
    assert pids_alive([c["pid"] for c in calls(bindir)]) == []


def test_hpcc_with_one_process_parses():
    """hpcc leaves its ping-pong and ring figures at -1 ("not run") with one MPI process; the parser
    used to refuse the whole report as negative (a real one-process run, N=3840)."""
    from hostbench_common.reftools import parse_text

    got = parse_text("hpcc", (LIKWID / "hpcc-1.5.0-np1-N3840.txt").read_text())["metrics"]
    hpl = got[0]
    assert (hpl["name"], hpl["value"], hpl["n"], hpl["processes"]) == ("hpl_gflops", 11.9232, 3840, 1)
    assert not any(m["name"].startswith(("pingpong", "ring")) for m in got)
    assert all(m["value"] >= 0 for m in got)


def test_shutdown_during_references_finishes_with_the_kernels_result(server, settings_for, fake_kernel, tools,
                                                                    monkeypatch):
    bindir = tools(hpcc="hang", mpirun="ok", likwid_bench="ok")
    monkeypatch.setenv("PATH", str(bindir))
    with daemon_for(settings_for(server.url, fake_kernel("ok"))) as d:
        d._begin(assignment(run_id=70, params={**CPU_PARAMS, "threads": [1], "reference": True}))
        limit = time.monotonic() + 15
        while not any(c["tool"] == "hpcc" for c in calls(bindir)) and time.monotonic() < limit:
            d.step()
        assert d.state is State.REFERENCING
        d.shutdown.set()
        while d.state is not State.IDLE:
            d.step()
        assert d.uploader.wait_idle(5)
    finish = server.finishes[0][1]
    assert finish["status"] == "succeeded" and len(finish["results"]) == 1
    assert [r["reason"] for r in finish["references"]] == ["hpcc stopped: runner stopped", "not run: runner stopped"]
    assert pids_alive([c["pid"] for c in calls(bindir)]) == []


def test_reference_tools_do_not_inherit_blas_kernel_overrides(monkeypatch, tmp_path):
    # a shell that pins OpenBLAS to AVX2 kernels must not hold hpcc's HPL below what the host gives
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setenv("OPENBLAS_L2_SIZE", "512")
    monkeypatch.setenv("HOSTBENCH_TOKEN_FOR_TEST", "secret")
    monkeypatch.setenv("SOME_OTHER", "kept")
    env = engine.reference_env({"OMP_NUM_THREADS": "1"})
    assert "OPENBLAS_CORETYPE" not in env and "OPENBLAS_L2_SIZE" not in env
    assert "HOSTBENCH_TOKEN_FOR_TEST" not in env  # the runner's own settings stay out, as for kernels
    assert env["SOME_OTHER"] == "kept" and env["OMP_NUM_THREADS"] == "1" and env["LC_ALL"] == "C"
    tool = engine.Tool(["/usr/bin/env"], tmp_path, {"OMP_NUM_THREADS": "1"})
    assert tool.proc.wait(timeout=10) == 0
    seen = dict(line.split("=", 1) for line in tool.stdout_path.read_text().splitlines() if "=" in line)
    assert "OPENBLAS_CORETYPE" not in seen and seen["OMP_NUM_THREADS"] == "1" and seen["SOME_OTHER"] == "kept"


@pytest.mark.parametrize(("asked", "mem", "n"), [
    (5000, 24 * GiB, 5000),  # the job's N as it is, not a multiple of NB
    (20000, 24 * GiB, 20000),
    (20000, 1 * GiB, 5760),  # a quarter of RAM still bounds it (5792), a multiple of NB then
    (0, 24 * GiB, 4032),  # 0: sized from our figure, as without it
])
def test_a_job_s_hpl_n_sets_hpl_s_problem_size(asked, mem, n):
    results = [{"threads": 1, "value": 55.0, "op": "fp64"}]
    ctx = Context(experiment="cpu", params={"op": "fp64", "threads": [1]}, results=results, cpus=2, mem_bytes=mem,
                  options={"hpl_n": asked})
    [plan] = hpcc.plans(ctx)
    assert plan.files["hpccinf.txt"].splitlines()[5].split()[0] == str(n)


def test_hpl_n_reaches_the_tools_from_the_job_and_is_bounded_at_the_runner(server, settings_for, fake_kernel, tools,
                                                                          monkeypatch, cpu_schema):
    bindir = tools(hpcc="ok", mpirun="ok", likwid_bench="ok")
    monkeypatch.setenv("PATH", str(bindir))
    sizes = []
    real_input = hpcc.hpcc_input
    monkeypatch.setattr(hpcc, "hpcc_input", lambda n, *rest: sizes.append(n) or real_input(n, *rest))
    params = {**CPU_PARAMS, "threads": [1], "reference": True, "hpl_n": 3000}
    _, finish = run_once(server, settings_for(server.url, fake_kernel("ok")), assignment(run_id=51, params=params))
    assert finish["status"] == "succeeded" and finish["references"][0]["tool"] == "hpcc"
    assert sizes == [3000]
    assert "hpl_n" not in " ".join(kernel_calls(bindir.parent / "hbk-ok")[0]["argv"])  # the runner's, not the kernel's
    for bad in (-1, 20001, 1.5, "3000", True):
        with pytest.raises(ParamError, match="hpl_n"):
            RUNS["cpu"].kernel_params({**params, "hpl_n": bad}, cpu_schema)
