#!/usr/bin/env python3
"""`make check` for ARM64 (called from check.py), on an x86-64 host: builds hbk with Debian's
aarch64-linux-gnu-gcc into build/arm64/ and runs it under qemu-user (correctness, not speed).

- the hot loops of the NEON and SVE paths in objdump: N independent FMAs/adds, no spills;
- the C assert programs test_cpu and test_memory (every op on every ISA the emulated CPU has,
  against closed forms and plain C);
- `hbk cpu` and `hbk memory` on the SVE, NEON and scalar paths, each run verified;
- run-time selection: auto picks SVE where HWCAP_SVE is set, and NEON on a qemu CPU without SVE
  (cortex-a72), where --isa sve is `unsupported` (exit 3) before any work;
- a corrupted chunk (test build, HBK_TEST_CORRUPT=1) is caught on the SVE paths.

The tools come from `./hostbench test` (stack/hostbench_stack/build.py arm64_tools: apt-get install
gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static); when they are missing this prints
one "skip check_arm64: <why>" line and checks nothing. Standalone: python3 tests/check_arm64.py build"""

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.dirname(HERE)
CC = "aarch64-linux-gnu-gcc"
OBJDUMP = "aarch64-linux-gnu-objdump"
SYSROOT = "/usr/aarch64-linux-gnu"
INSTALL = ("./hostbench test installs them as root (apt-get install gcc-aarch64-linux-gnu "
           "libc6-dev-arm64-cross qemu-user-static)")

# function in cpu.o: (instruction regex, count per loop iteration)
CPU_LOOPS = {
    "fp64_neon": (r"fmla\s+v\d+\.2d", 16), "fp32_neon": (r"fmla\s+v\d+\.4s", 16),
    "int32_neon": (r"add\s+v\d+\.4s", 16),
    "fp64_sve": (r"fmad\s+z\d+\.d", 16), "fp32_sve": (r"fmad\s+z\d+\.s", 16),
    "int32_sve": (r"add\s+z\d+\.s", 16),
    # the vector-loaded clock: 50 FMAs beside 100 dependent adds (checked below)
    "vclock_neon": (r"fmla\s+v\d+\.2d", 50), "vclock_sve": (r"fmla\s+z\d+\.d, p\d+/m", 50),
}
# function in memory_loops.o: instruction regex that must appear in its loop
MEM_LOOPS = {
    "sum_neon": r"add\s+v\d+\.2d", "copy_neon": r"(str|stp|st1)\s+q|st1\s+\{v",
    "sum_sve": r"add\s+z\d+\.d", "fill_sve": r"st1d\s+\{?z", "fill_nt_sve": r"stnt1d\s+\{?z",
    "triad_d_nt_sve": r"stnt1d\s+\{?z", "triad_d_sve": r"st1d\s+\{?z",
}


def skip_reason():
    if platform.machine() == "aarch64":
        return "this host is aarch64: the native build and make check run the ARM paths"
    if shutil.which(CC) is None:
        return f"{CC} not found; {INSTALL}"
    if not os.path.exists(os.path.join(SYSROOT, "include", "stdio.h")):
        return f"no aarch64 C library in {SYSROOT} (libc6-dev-arm64-cross); {INSTALL}"
    if qemu() is None:
        return f"neither qemu-aarch64-static nor qemu-aarch64 found; {INSTALL}"
    return None


def qemu():
    return shutil.which("qemu-aarch64-static") or shutil.which("qemu-aarch64")


def loop_body(disasm, func):
    """The instructions of the function's innermost backward-branching loop."""
    m = re.search(rf"<{func}>:\n(.*?)(?:\n\n|\Z)", disasm, re.S)
    if not m:
        return None
    lines = m.group(1).splitlines()
    addr = [int(line.split(":")[0], 16) for line in lines]
    best = None
    for i, line in enumerate(lines):
        b = re.search(r"\bb(?:\.\w+)?\s+([0-9a-f]+)\s+<", line) or \
            re.search(r"\b(?:cbnz|cbz|tbnz|tbz)\s+[^,]+(?:,\s*#\w+)?,\s*([0-9a-f]+)\s+<", line)
        if b and int(b.group(1), 16) < addr[i]:
            start = addr.index(int(b.group(1), 16)) if int(b.group(1), 16) in addr else None
            if start is not None and (best is None or i - start < best[1] - best[0]):
                best = (start, i)
    return "\n".join(lines[best[0]:best[1] + 1]) if best else None


def run(build, check):
    why = skip_reason()
    if why:
        print(f"skip check_arm64: {why}", flush=True)
        return
    t0 = time.time()
    out = os.path.join(build, "arm64")
    targets = [os.path.join(out, t) for t in ("hbk", "hbk-test", "tests/test_cpu", "tests/test_memory")]
    p = subprocess.run(["make", "-s", "-j2", "-C", KERNELS, f"BUILD={os.path.abspath(out)}", f"CC={CC}",
                        "NVCC=", "CFLAGS=-O2 -g -Wall -Wextra -Wpedantic",
                        *[os.path.abspath(t) for t in targets]],
                       capture_output=True, text=True)
    if not check(p.returncode == 0, f"arm64: cross build failed: {p.stderr[-2000:]}"):
        return
    check("warning" not in p.stderr, f"arm64: the cross build warns: {p.stderr[-2000:]}")
    hbk, hbk_test = os.path.join(out, "hbk"), os.path.join(out, "hbk-test")
    p = subprocess.run(["file", hbk], capture_output=True, text=True) if shutil.which("file") else None
    if p is not None:
        check("aarch64" in p.stdout, f"arm64: hbk is not an aarch64 binary: {p.stdout}")

    # ---- the hot loops ----
    if shutil.which(OBJDUMP):
        for obj, loops in (("cpu.o", CPU_LOOPS), ("memory_loops.o", MEM_LOOPS)):
            disasm = subprocess.run([OBJDUMP, "-d", "--no-show-raw-insn",
                                     os.path.join(out, "obj", "kernels", obj)],
                                    capture_output=True, text=True).stdout
            for func, spec in loops.items():
                body = loop_body(disasm, func)
                if not check(body is not None, f"arm64: no loop found in {func}"):
                    continue
                if obj == "cpu.o":
                    insn, n = spec
                    got = len(re.findall(insn, body))
                    check(got == n, f"arm64: {func} loop has {got} x {insn}, want {n}:\n{body}")
                    check(not re.search(r"\[sp", body), f"arm64: {func} loop spills to the stack:\n{body}")
                    if func.startswith("vclock_"):
                        adds = re.findall(r"\badd\s+(x\d+), (x\d+), (x\d+)", body)
                        check(len(adds) == 100 and len(set(adds)) == 1 and adds[0][0] == adds[0][1] != adds[0][2],
                              f"arm64: {func}: 100 x one dependent add x = x + one: {set(adds)}")
                        dests = set(re.findall(r"fmla\s+([vz]\d+)", body))
                        srcs = set(re.findall(r"fmla\s+[vz]\d+\.\w+, (?:p\d+/m, )?([vz]\d+)\.\w+, ([vz]\d+)", body)[0])
                        check(len(dests) == 8 and not dests & srcs,
                              f"arm64: {func}: 8 accumulators, not m or c: {dests} {srcs}")
                else:
                    check(re.search(spec, body) is not None, f"arm64: {func} loop lacks {spec}:\n{body}")
    else:
        print(f"check_arm64: {OBJDUMP} not found: hot-loop checks skipped", flush=True)

    env = dict(os.environ, QEMU_LD_PREFIX=SYSROOT)
    emu = qemu()

    def emulate(argv, cpu=None, extra_env=None, timeout=120):
        pre = [emu] + (["-cpu", cpu] if cpu else [])
        p = subprocess.run(pre + argv, capture_output=True, text=True, timeout=timeout,
                           env=dict(env, **(extra_env or {})))
        lines = []
        for raw in p.stdout.splitlines():
            try:
                lines.append(json.loads(raw))
            except ValueError:
                lines.append({"type": "<not json>", "raw": raw})
        return p.returncode, lines, p.stdout + p.stderr

    def quick(*args):
        return ["--threads", "1", "--duration_s", "0.2", "--repeats", "1", "--warmup_s", "0",
                "--no_sampler", "true", *args]

    mem_small = ["--allow_cache", "true"]
    jobs = {
        # C assert programs
        "test_cpu": ([os.path.join(out, "tests", "test_cpu")], None, None),
        "test_memory": ([os.path.join(out, "tests", "test_memory")], None, None),
        # through the CLI, one chunk (2^18 steps of every chain) each: every op once, every ISA once
        # (test_cpu above runs every op on every ISA); emulated SVE FP is slow, so fp32 and int32 take it
        **{f"cpu {op} {isa}": ([hbk, "cpu", *quick("--op", op, "--isa", isa)], None, None)
           for op, isa in (("fp32", "sve"), ("int32", "sve"), ("fp64", "neon"), ("fp64", "scalar"))},
        "cpu auto without SVE": ([hbk, "cpu", *quick("--op", "int32")], "cortex-a72", None),
        "cpu sve without SVE": ([hbk, "cpu", *quick("--isa", "sve")], "cortex-a72", None),
        # the second chunk is corrupted: int32, the fastest op under qemu, does two in the window
        "cpu sve corrupt": ([hbk_test, "cpu", *quick("--op", "int32", "--isa", "sve")], None,
                            {"HBK_TEST_CORRUPT": "1"}),
        **{f"memory {op} {isa}": ([hbk, "memory", *quick("--op", op, "--isa", isa), *mem_small, *extra],
                                  None, None)
           for isa in ("sve", "neon", "scalar")
           for op, extra in (("read", ["--buffer_bytes", "1048576", "--blocks", "8,64,65536"]),
                             ("copy", ["--buffer_bytes", "1048576", "--blocks", "8,65536", "--stores", "plain"]),
                             ("rand_write", ["--buffer_bytes", "1048576", "--blocks", "64"]),
                             ("stream_triad", ["--array_size", "131072"]))},
        "memory copy nt sve": ([hbk, "memory", *quick("--op", "copy", "--isa", "sve", *mem_small,
                                                      "--buffer_bytes", "1048576", "--blocks", "65536",
                                                      "--stores", "nt")], None, None),
        "memory stream_triad_nt sve": ([hbk, "memory", *quick("--op", "stream_triad_nt", "--isa", "sve",
                                                              *mem_small, "--array_size", "131072")], None, None),
        "memory stream_triad_nt neon": ([hbk, "memory", *quick("--op", "stream_triad_nt", "--isa", "neon",
                                                               *mem_small, "--array_size", "131072")], None, None),
        "memory read sve corrupt": ([hbk_test, "memory", *quick("--op", "read", "--isa", "sve", *mem_small,
                                                                "--buffer_bytes", "1048576", "--blocks", "65536")],
                                    None, {"HBK_TEST_CORRUPT": "1"}),
        "memory latency": ([hbk, "memory", *quick("--op", "latency", "--sizes", "16384,262144")], None, None),
    }
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        futures = {name: pool.submit(emulate, argv, cpu, extra) for name, (argv, cpu, extra) in jobs.items()}
        res = {name: f.result() for name, f in futures.items()}

    for name in ("test_cpu", "test_memory"):
        rc, _, raw = res[name]
        m = re.search(r"(\d+) passed, (\d+) failed\s*$", raw)
        check(rc == 0 and m is not None and int(m.group(1)) > 0 and m.group(2) == "0",
              f"arm64: {name} under qemu: rc {rc}: {raw[-1500:]}")
        if m:
            print(f"check_arm64: {name} under qemu: {m.group(0).strip()}", flush=True)

    def start_of(lines):
        return lines[0] if lines and lines[0].get("type") == "start" else {}

    def ok_run(name, isa, bits=None):
        rc, lines, raw = res[name]
        start = start_of(lines)
        results = [x for x in lines if x.get("type") == "result"]
        end = lines[-1] if lines else {}
        good = (rc == 0 and start.get("isa") == isa and results and all(r.get("verified") for r in results)
                and end.get("type") == "end" and end.get("status") == "ok")
        if bits is not None:
            good = good and start.get("vector_bits") == bits
        check(good, f"arm64: {name}: rc {rc}, isa {start.get('isa')}, {raw[-1500:]}")
        return start

    for op in ("fp32", "int32"):
        s = ok_run(f"cpu {op} sve", "sve")
        lanes = s.get("lanes")
        check(s.get("vector_bits", 0) >= 128 and s.get("vector_bits", 0) % 128 == 0
              and lanes == s["vector_bits"] // 32,
              f"arm64: cpu {op} sve: vector_bits {s.get('vector_bits')} lanes {lanes}")
        check(s.get("isa_available") == ["sve", "neon", "scalar"], f"arm64: isa_available {s.get('isa_available')}")
        # qemu's clock is no core's: only that the vector-loaded one is measured, with SVE FMAs, for FP
        want = "fmla z.d" if op == "fp32" else None
        check((want in (s.get("clock_vector_method") or "") and (s.get("clock_vector_ghz") or 0) > 0)
              if want else s.get("clock_vector_ghz") is None and s.get("clock_vector_method") is None,
              f"arm64: cpu {op} sve: vector-loaded clock {s.get('clock_vector_ghz')} {s.get('clock_vector_method')}")
    s = ok_run("cpu fp64 neon", "neon", 128)
    check(s.get("lanes") == 2 and s.get("fma") is True and s.get("mix") == "fmla v.2d", f"arm64: cpu fp64 neon {s}")
    after = [x.get("clock_after_vector_ghz") for x in res["cpu fp64 neon"][1] if x.get("type") == "result"]
    check("fmla v.2d" in (s.get("clock_vector_method") or "") and (s.get("clock_vector_ghz") or 0) > 0
          and after and all((a or 0) > 0 for a in after),
          f"arm64: cpu fp64 neon: vector-loaded clock {s.get('clock_vector_ghz')} after {after}")
    s = ok_run("cpu fp64 scalar", "scalar", 64)
    check(s.get("clock_vector_ghz") is None, f"arm64: cpu fp64 scalar has no vector-loaded clock: {s}")
    s = ok_run("cpu auto without SVE", "neon", 128)
    check(s.get("isa_available") == ["neon", "scalar"], f"arm64: without SVE, isa_available {s.get('isa_available')}")
    rc, lines, raw = res["cpu sve without SVE"]
    check(rc == 3 and len(lines) == 1 and lines[0].get("code") == "unsupported" and "HWCAP_SVE" in raw,
          f"arm64: --isa sve on a CPU without SVE: rc {rc} {raw[-800:]}")
    rc, lines, raw = res["cpu sve corrupt"]
    check(rc == 4 and any(x.get("type") == "result" and x.get("verified") is False for x in lines),
          f"arm64: a corrupted SVE chunk was not caught: rc {rc} {raw[-800:]}")
    for isa in ("sve", "neon", "scalar"):
        for op in ("read", "copy", "rand_write", "stream_triad"):
            s = ok_run(f"memory {op} {isa}", isa)
            if op == "copy":
                results = [x for x in res[f"memory {op} {isa}"][1] if x.get("type") == "result"]
                check(all(r.get("stores") == "plain" for r in results), f"arm64: memory copy {isa} stores")
    s = ok_run("memory copy nt sve", "sve")
    results = [x for x in res["memory copy nt sve"][1] if x.get("type") == "result"]
    check(results and all(r.get("stores") == "nt" for r in results) and s.get("store_insn") == ["stnt1d z"],
          f"arm64: SVE copy with --stores nt: {results} {s.get('store_insn')}")
    ok_run("memory stream_triad_nt sve", "sve")
    rc, lines, raw = res["memory stream_triad_nt neon"]
    check(rc == 3 and lines and lines[0].get("code") == "unsupported" and "need SVE" in raw and "isa neon" in raw,
          f"arm64: stream_triad_nt on NEON must be refused: rc {rc} {raw[-800:]}")
    rc, lines, raw = res["memory read sve corrupt"]
    check(rc == 4 and any(x.get("type") == "result" and x.get("verified") is False for x in lines),
          f"arm64: a corrupted SVE read was not caught: rc {rc} {raw[-800:]}")
    ok_run("memory latency", "sve")
    print(f"check_arm64: {len(jobs)} runs under {os.path.basename(emu)} in {time.time() - t0:.1f} s "
          f"(build included)", flush=True)


if __name__ == "__main__":
    state = {"passed": 0, "failed": 0}

    def _check(cond, what):
        state["passed" if cond else "failed"] += 1
        if not cond:
            print(f"FAIL {what}", flush=True)
        return cond

    run(sys.argv[1] if len(sys.argv) > 1 else "build", _check)
    print(f"{state['passed']} passed, {state['failed']} failed")
    sys.exit(1 if state["failed"] else 0)
