#!/usr/bin/env python3
"""`make check` for the memory kernel (called from check.py): its C asserts, its parameters as
--describe publishes them, refusals before any work (a DRAM figure asked of a cache-sized working
set among them, also on a fixture sysfs), every op at tiny sizes with 1 and 2 threads, every ISA,
corruption caught in every op family (test build), and the hot loops in objdump.
Standalone: python3 tests/check_memory.py build"""

import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter

from check_results import results_declared  # tests/check_results.py

BLOCK_OPS = ("copy", "read", "write", "rand_read", "rand_write")
ARM = os.uname().machine == "aarch64"  # the ISAs of the memory kernel, widest first, per architecture
MEM_ISAS = ("sve", "neon", "scalar") if ARM else ("avx512", "avx2", "scalar")
HIDDEN_ISA = "neon" if ARM else "avx2"
STREAM_OPS = tuple(
    f"stream_{k}{nt}" for nt in ("", "_nt") for k in ("copy", "scale", "add", "triad")
)
PARAMS = [
    "op",
    "blocks",
    "buffer_bytes",
    "stores",
    "array_size",
    "sizes",
    "allow_cache",
    "hugepages",
    "isa",
    "threads",
    "repeats",
    "duration_s",
    "warmup_s",
    "interval_s",
    "stable_cv",
    "max_repeats",
    "no_sampler",
    "sampler_ab",
    "work",
    "quiet_wait_s",
    "disturbed_retries",
    "disturbed_wait",
]


def run(build, check):
    hbk = os.path.join(build, "hbk")
    hbk_test = os.path.join(build, "hbk-test")

    def call(*args, exe=hbk, env=None, timeout=120):
        p = subprocess.run(
            [exe, "memory", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=dict(os.environ, **(env or {})),
        )
        lines = []
        for raw in p.stdout.splitlines():
            try:
                lines.append(json.loads(raw))
            except ValueError:
                lines.append({"type": "<not json>", "raw": raw})
        results_declared(exe, "memory", lines, check, f"{exe} memory {' '.join(args[:4])}")
        return p.returncode, lines, p.stdout + p.stderr

    def of(lines, t):
        return [x for x in lines if x.get("type") == t]

    def tiny(*args, threads="1"):
        return [
            "--threads",
            threads,
            "--duration_s",
            "0.2",
            "--repeats",
            "1",
            "--warmup_s",
            "0",
            "--no_sampler",
            "true",
            *args,
        ]

    def refused(args, code, words, env=None, exe=hbk):
        rc, lines, raw = call(*args, env=env, exe=exe)
        msg = lines[0].get("message", "") if len(lines) == 1 else ""
        check(
            rc == {"bad_param": 2, "unsupported": 3}[code]
            and len(lines) == 1
            and lines[0].get("code") == code
            and all(w in msg for w in words),
            f"memory {args}: exit {code}, one error line with {words}; got {rc} {raw[-400:]!r}",
        )

    # ---- C asserts ----
    p = subprocess.run(
        [os.path.join(build, "tests", "test_memory")], capture_output=True, text=True
    )
    m = re.search(r"(\d+) passed, (\d+) failed\s*$", p.stdout)
    check(
        m is not None and p.returncode == 0 and m.group(2) == "0",
        f"test_memory: {p.stdout.strip()} {p.stderr.strip()}",
    )

    # ---- parameters ----
    rc, lines, raw = call("--describe")
    props = lines[0]["parameters"]["properties"] if rc == 0 and lines else {}
    check(list(props) == PARAMS, f"memory params: {list(props)}")
    check(props.get("op", {}).get("enum") == [*BLOCK_OPS, *STREAM_OPS, "latency"], "memory op enum")
    check(
        props.get("blocks", {}).get("default") == [8, 8192, 8388608, 83886080]
        and (props["blocks"]["items"]["minimum"], props["blocks"]["items"]["maximum"])
        == (8, 2**30),
        f"blocks default and bounds: {props.get('blocks')}",
    )
    check(
        props.get("sizes", {}).get("items", {}).get("minimum") == 4096
        and props["sizes"]["items"]["maximum"] == 2**30,
        "sizes 4 KiB .. 1 GiB",
    )
    check(
        props.get("stores", {}).get("enum") == ["auto", "plain", "nt"]
        and props["stores"]["default"] == "auto",
        "stores enum, default auto",
    )
    check(props.get("isa", {}).get("enum") == ["auto", *MEM_ISAS], "isa enum")
    check("10^6" in props.get("op", {}).get("description", ""), "op help: MB/s is 10^6 bytes/s")

    # ---- refusals: exit 2 or 3, one error line, before any work ----
    for name in ("blocks", "buffer_bytes", "array_size", "sizes"):  # the published bounds hold
        bound = props.get(name, {}).get("items", props.get(name, {}))
        op = {"blocks": "copy", "buffer_bytes": "copy", "array_size": "stream_copy"}.get(
            name, "latency"
        )
        refused(
            ["--op", op, f"--{name}", str(int(bound.get("maximum", 0)) + 1)],
            "bad_param",
            ["above the maximum"],
        )
    refused(["--blocks", "12"], "bad_param", ["multiple of 8"])
    refused(["--op", "stream_triad", "--blocks", "64"], "bad_param", ["blocks does not apply to op stream_triad"])
    refused(["--op", "read", "--stores", "nt"], "bad_param", ["stores does not apply to op read"])
    refused(["--op", "copy", "--array_size", "4096"], "bad_param", ["array_size does not apply to op copy"])
    refused(["--op", "latency", "--allow_cache", "true"], "bad_param", ["allow_cache does not apply to op latency"])
    refused(["--op", "latency", "--sizes", "5000"], "bad_param", ["multiple of the cache line"])
    refused(
        ["--op", "stream_triad", "--array_size", "1048576"],
        "bad_param",
        ["is smaller than 4x L3", "this would measure cache, not DRAM", "--allow_cache true"],
    )
    refused(
        ["--op", "copy", "--buffer_bytes", "1048576"],
        "bad_param",
        ["is smaller than 4x L3", "this would measure cache, not DRAM"],
    )
    refused(
        ["--op", "stream_add", "--array_size", "2048", "--threads", "4", "--allow_cache", "true"],
        "bad_param",
        ["less than 1024 per thread"],
    )
    refused(
        ["--op", "latency", "--sizes", "1073741824", "--threads", "256"],
        "unsupported",
        ["MemAvailable", "per thread fits"],
    )
    refused(
        ["--op", "read", "--blocks", "1073741824", "--threads", "256"],
        "unsupported",
        ["MemAvailable", "fewer threads"],
    )
    # a row that does not fit is refused alone, with the reason; the rows that fit run (issue 26: a
    # latency run at 8 threads of 1 GiB each was refused whole on a host with less than ~9.5 GiB free)
    rc, lines, raw = call(
        *tiny("--op", "latency", "--sizes", "4096,67108864", threads="1,2"),
        exe=hbk_test,
        env={"HBK_TEST_MEM_AVAILABLE": str(100 << 20)},
    )
    start = lines[0] if lines else {}
    rows = sorted((r["threads"], r["block_bytes"]) for r in of(lines, "result"))
    check(
        rc == 0 and rows == [(1, 4096), (1, 67108864), (2, 4096)],
        f"memory latency, 100 MiB available: 3 rows run, 64 MiB at 2 threads does not: {rows} {raw[-300:]!r}",
    )
    why = start.get("refused") or [{}]
    check(
        len(why) == 1
        and (why[0].get("op"), why[0].get("block_bytes"), why[0].get("threads")) == ("latency", 67108864, 2)
        and "MemAvailable" in why[0].get("reason", "")
        and "up to 32 MiB per thread fits" in why[0].get("reason", ""),
        f"memory: the refused row is in the start event with its reason: {start.get('refused')}",
    )
    check(
        abs(start.get("expected_duration_s", 0) - 0.6) < 1e-9,
        f"memory: the expected duration counts the rows that run (3 x 0.2 s): {start.get('expected_duration_s')}",
    )
    refused(
        ["--isa", HIDDEN_ISA],
        "unsupported",
        ["use --isa auto"],
        exe=hbk_test,
        env={"HBK_TEST_HIDE_ISA": HIDDEN_ISA},
    )

    # the cache sizes come from sysfs: a fixture tree with an 8 MiB L3 gives the documented message
    with tempfile.TemporaryDirectory() as root:
        files = {
            0: ("1", "Data", "48K"),
            1: ("1", "Instruction", "32K"),
            2: ("2", "Unified", "1024K"),
            3: ("3", "Unified", "8192K"),
        }
        for cpu in range(len(os.sched_getaffinity(0)) + 1):
            for idx, (level, kind, size) in files.items():
                d = os.path.join(root, f"cpu{cpu}", "cache", f"index{idx}")
                os.makedirs(d)
                for name, value in (
                    ("level", level),
                    ("type", kind),
                    ("size", size),
                    ("shared_cpu_list", "0-1023"),
                    ("coherency_line_size", "64"),
                ):
                    with open(os.path.join(d, name), "w") as f:
                        f.write(value + "\n")
        env = {"HBK_TEST_SYSFS_CPU": root}
        refused(
            ["--op", "stream_triad", "--array_size", "1048576"],
            "bad_param",
            [
                "working set 8 MiB is smaller than 4x L3 (4 x 8 MiB = 32 MiB); this would measure "
                "cache, not DRAM",
                "--array_size 0 (auto: 4194304 elements)",
            ],
            env=env,
            exe=hbk_test,
        )
        rc, lines, _ = call(
            *tiny("--op", "latency", "--sizes", "4096,65536,4194304,16777216"),
            env=env,
            exe=hbk_test,
        )
        levels = [(r["block_bytes"], r["level"]) for r in of(lines, "result")]
        check(
            rc == 0
            and levels == [(4096, "L1"), (65536, "L2"), (4194304, "L3"), (16777216, "DRAM")],
            f"latency levels against the fixture caches: {levels}",
        )
        start = lines[0] if lines else {}
        check(
            start.get("caches", {}).get("l3_total") == 8 << 20
            and start["caches"]["l1d"] == 48 << 10,
            f"caches read from the fixture: {start.get('caches')}",
        )

    # ---- every op runs, verifies, and reports what it measured ----
    for op in BLOCK_OPS:
        threads = "1,2" if op in ("copy", "rand_read") else "2"
        rc, lines, raw = call(
            *tiny(
                "--op",
                op,
                "--blocks",
                "8,72,4096",
                "--buffer_bytes",
                "2097152",
                "--allow_cache",
                "true",
                threads=threads,
            )
        )
        res = of(lines, "result")
        check(
            rc == 0
            and len(res) == 3 * len(threads.split(","))
            and all(r["verified"] and r["value"] > 0 for r in res),
            f"{op}: a verified result per block and thread count, exit 0: {rc} {raw[-300:]!r}",
        )
        check(
            all(
                r.get("level") in ("L1", "L2", "L3", "DRAM")
                and r.get("ns_per_op", 0) > 0
                and r.get("ns_per_op_on_cpu", 0) > 0
                and r.get("working_set_bytes", 0) >= 2097152
                for r in res
            ),
            f"{op}: level, ns_per_op, working_set_bytes in results",
        )
        check(
            sorted({(r["block_bytes"], r["threads"]) for r in res})
            == [(b, int(t)) for b in (8, 72, 4096) for t in threads.split(",")],
            f"{op}: every block x threads",
        )
        start = lines[0] if lines else {}
        check(
            start.get("bytes_per_op", "").startswith("2 x block" if op == "copy" else "block")
            and [c["work_per_unit"] for c in start.get("configs", [])]
            == [b * (2 if op == "copy" else 1) for b in (8, 72, 4096)],
            f"{op}: bytes per op",
        )
        check(start.get("mb") == "MB/s = 10^6 bytes per second", f"{op}: MB/s stated")
    rc, lines, _ = call(
        *tiny(
            "--op",
            "write",
            "--stores",
            "nt",
            "--blocks",
            "64",
            "--buffer_bytes",
            "1048576",
            "--allow_cache",
            "true",
        )
    )
    check(
        rc == 0
        and lines[0].get("stores") == "nt"
        and of(lines, "result")[0]["verified"]
        and of(lines, "result")[0]["stores"] == "nt",
        "write --stores nt verifies",
    )
    # auto: non-temporal past the L3 for whole-line writes; plain for cache-sized or partial lines
    rc, lines, _ = call(
        *tiny(
            "--op",
            "rand_write",
            "--blocks",
            "8,64",
            "--buffer_bytes",
            "1048576",
            "--allow_cache",
            "true",
        )
    )
    check(
        rc == 0 and [r["stores"] for r in of(lines, "result")] == ["plain", "plain"],
        "stores auto: plain in cache",
    )
    rc, lines, _ = call(*tiny("--op", "rand_write", "--blocks", "8,4096"))
    check(
        rc == 0 and [r["stores"] for r in of(lines, "result")] == ["plain", "nt"],
        "stores auto past the L3: plain for 8-byte random writes, nt for whole lines",
    )

    for op in STREAM_OPS:
        threads = "1,2" if op == "stream_triad" else "2"
        rc, lines, raw = call(
            *tiny("--op", op, "--array_size", "100000", "--allow_cache", "true", threads=threads)
        )
        res, start = of(lines, "result"), lines[0] if lines else {}
        check(
            rc == 0
            and len(res) == len(threads.split(","))
            and all(r["verified"] and r["value"] > 0 for r in res),
            f"{op}: verified, exit 0: {rc} {raw[-300:]!r}",
        )
        check(
            start.get("label", "").startswith("STREAM-variant ")
            and start.get("array_size") == 100000
            and start.get("bytes_per_element") == (24 if "add" in op or "triad" in op else 16)
            and start.get("stores") == ("nt" if op.endswith("_nt") else "plain"),
            f"{op}: label, array size, bytes per element: {start.get('label')}",
        )
        check(all(r.get("level") in ("L2", "L3") for r in res), f"{op}: a cache-sized run says so")
    rc, lines, _ = call(
        "--op",
        "stream_copy",
        "--threads",
        "1",
        "--duration_s",
        "0.2",
        "--repeats",
        "1",
        "--warmup_s",
        "0",
    )
    check(
        rc == 0
        and lines[0].get("array_size", 0) * 8 >= 4 * lines[0]["caches"]["l3_total"]
        and of(lines, "result")[0]["level"] == "DRAM",
        "stream default: arrays of 4x L3, level DRAM",
    )

    rc, lines, raw = call(*tiny("--op", "latency", "--sizes", "4096,2097152", threads="1,2"))
    res = of(lines, "result")
    check(
        rc == 0
        and len(res) == 4
        and all(
            r["verified"] and r["unit"] == "Mload/s" and r.get("ns_per_load", 0) > 0 for r in res
        ),
        f"latency: verified, Mload/s and ns_per_load: {raw[-300:]!r}",
    )
    check(
        [r["level"] for r in res if r["block_bytes"] == 4096] == ["L1", "L1"]
        and [r["nodes"] for r in res][:1] == [4096 // lines[0]["line_bytes"]],
        "latency: 4 KiB is L1",
    )

    for isa in MEM_ISAS:
        rc, lines, raw = call(
            *tiny(
                "--op",
                "stream_triad_nt",
                "--isa",
                isa,
                "--array_size",
                "65536",
                "--allow_cache",
                "true",
            )
        )
        if rc == 3:
            check(isa in lines[0].get("message", ""), f"isa {isa}: unsupported says why")
            continue
        check(
            rc == 0 and lines[0].get("isa") == isa and of(lines, "result")[0]["verified"],
            f"isa {isa}: verified {raw[-200:]!r}",
        )
        rc, lines, raw = call(
            *tiny(
                "--op",
                "rand_read",
                "--isa",
                isa,
                "--blocks",
                "256",
                "--buffer_bytes",
                "1048576",
                "--allow_cache",
                "true",
            )
        )
        check(rc == 0 and all(r["verified"] for r in of(lines, "result")), f"isa {isa}: rand_read")

    # ---- a corrupted chunk makes the run untrusted, in every op family ----
    for args in (
        ["--op", "read", "--blocks", "4096"],
        ["--op", "rand_read", "--blocks", "8"],
        ["--op", "write", "--blocks", "64"],
        ["--op", "rand_write", "--blocks", "4096"],
        ["--op", "copy", "--blocks", "8"],
        ["--op", "stream_triad" if ARM else "stream_triad_nt", "--array_size", "65536"],  # ARM: nt needs SVE
        ["--op", "latency", "--sizes", "8192"],
    ):
        extra = [] if "latency" in args else ["--allow_cache", "true"]
        extra += ["--buffer_bytes", "1048576"] if "--blocks" in args else []
        rc, lines, raw = call(*tiny(*args, *extra), exe=hbk_test, env={"HBK_TEST_CORRUPT": "1"})
        res, end = of(lines, "result"), lines[-1] if lines else {}
        check(
            rc == 4
            and res
            and res[0]["verified"] is False
            and res[0].get("reason")
            and end.get("status") == "untrusted",
            f"corrupt {args}: untrusted, exit 4: {rc} {raw[-300:]!r}",
        )

    # ---- the hot loops are the instructions the kernel claims ----
    if os.uname().machine in ("x86_64", "amd64"):
        disasm = "".join(  # the loops per ISA, and the chase of the per-thread side
            subprocess.run(
                ["objdump", "-d", "--no-show-raw-insn", os.path.join(build, "obj", "kernels", obj)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            for obj in ("memory_loops.o", "memory_work.o")
        )
        loops = {  # function: (instruction, count, register) in its main loop
            "triad_d_nt_avx512": ("vmovntpd", 4, "zmm"),
            "triad_d_avx512": ("vmovapd", 4, "zmm"),
            "copy_d_nt_avx512": ("vmovntpd", 4, "zmm"),
            "copy_nt_avx512": ("vmovntdq", 4, "zmm"),
            "sum_avx512": ("vpaddq", 4, "zmm"),
            "triad_d_nt_avx2": ("vmovntpd", 4, "ymm"),
            "copy_nt_scalar": ("movnti", 4, "r"),
            "chase": ("mov", 8, "r"),
        }
        for func, (insn, count, reg) in loops.items():
            body = main_loop(disasm, func)
            if not check(body is not None, f"{func}: loop found"):
                continue
            ops = Counter(t.split()[0] for t in body)
            check(
                ops[insn] == count
                and (reg == "r" or all(reg in t for t in body if t.startswith(insn))),
                f"{func}: {count} x {insn} {reg} per iteration, got {dict(ops)}",
            )
        body = main_loop(disasm, "copy_scalar") or []
        check(
            body and not any("mm" in t for t in body) and not any("call" in t for t in body),
            f"copy_scalar: 8-byte moves, not vectorised, no memcpy call: {body}",
        )
        chase = main_loop(disasm, "chase") or []
        check(
            sum(bool(re.match(r"mov\s+(0x0)?\(%\w+\),%\w+$", t)) for t in chase) == 8,
            f"chase: 8 dependent loads per iteration: {chase}",
        )


def main_loop(disasm, func):
    """The instructions of func's longest loop (conditional backward jump; objdump -d text)."""
    m = re.search(rf"<{func}>:\n(.*?)\n\n", disasm, re.S)
    if not m:
        return None
    insns = []
    for line in m.group(1).splitlines():
        parts = line.split("\t")
        if len(parts) >= 2 and re.match(r"\s*[0-9a-f]+:", parts[0]):
            insns.append((int(parts[0].strip().rstrip(":"), 16), parts[-1].strip()))
    best = None
    for addr, text in insns:
        j = re.match(r"j(?!mp)\w+\s+([0-9a-f]+) <", text)  # conditional: a loop, not a tail jump
        if j and int(j.group(1), 16) < addr:
            body = [t for a, t in insns if int(j.group(1), 16) <= a <= addr]
            if best is None or len(body) > len(best):
                best = body
    return best


if __name__ == "__main__":
    counts = Counter()

    def _check(cond, what):
        counts[bool(cond)] += 1
        if not cond:
            print(f"FAIL {what}", flush=True)
        return cond

    run(sys.argv[1] if len(sys.argv) > 1 else "build", _check)
    print(f"{counts[True]} passed, {counts[False]} failed")
    sys.exit(1 if counts[False] else 0)
