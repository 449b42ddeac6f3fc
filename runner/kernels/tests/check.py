#!/usr/bin/env python3
"""`make check`: runs the C assert programs, the hot-loop assembly check, and the CLI contract
tests of docs/kernel-protocol.md against build/hbk (build/hbk-test for the test-only hooks).
Prints one line per failure and a last line "N passed, M failed"; exits 1 on any failure."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from check_results import results_declared  # tests/check_results.py

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
HBK = os.path.join(BUILD, "hbk")
HBK_TEST = os.path.join(BUILD, "hbk-test")
CPU_OBJ = os.path.join(BUILD, "obj", "kernels", "cpu.o")
C_TESTS = ["test_json", "test_params", "test_rules", "test_results", "test_cpu", "test_hostfacts",
           "test_harness"]
ARM = os.uname().machine == "aarch64"  # the ISAs of the cpu kernel, widest first, per architecture
CPU_ISAS = ("sve", "neon", "scalar") if ARM else ("avx512", "avx2", "sse2", "scalar")
HIDDEN_ISA = "neon" if ARM else "avx2"  # one the test build can pretend is missing

passed = 0
failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}", flush=True)
    return cond


def hbk(*args, exe=HBK, env=None, timeout=60):
    """Runs the binary; returns (exit status, parsed stdout lines, raw stdout)."""
    full_env = dict(os.environ, **(env or {}))
    p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout,
                       env=full_env)
    lines = []
    for raw in p.stdout.splitlines():
        try:
            lines.append(json.loads(raw))
        except ValueError:
            lines.append({"type": "<not json>", "raw": raw})
    if args and not args[0].startswith("-"):  # every result key is declared by its kernel
        results_declared(exe, args[0], lines, check, f"{exe} {' '.join(args[:3])}")
    return p.returncode, lines, p.stdout


def of_type(lines, t):
    return [x for x in lines if isinstance(x, dict) and x.get("type") == t]


def quick(*args):
    """A short cpu run: one thread, 0.2 s, no warm-up."""
    return ["--threads", "1", "--duration_s", "0.2", "--repeats", "1", "--warmup_s", "0",
            *args]


# ---- C assert programs ----

def test_c_programs():
    global passed, failed
    for name in C_TESTS:
        p = subprocess.run([os.path.join(BUILD, "tests", name)], capture_output=True, text=True)
        sys.stdout.write(p.stderr)
        m = re.search(r"(\d+) passed, (\d+) failed\s*$", p.stdout)
        if check(m is not None and p.returncode == (int(m.group(2)) != 0), f"{name} summary"):
            passed += int(m.group(1))
            failed += int(m.group(2))


# ---- the hot loops are what docs/methodology/cpu.md says ----

HOT_LOOPS = {  # function: (instruction, count per iteration)
    "fp64_avx512": ("vfmadd132pd", 16), "fp32_avx512": ("vfmadd132ps", 16),
    "int32_avx512": ("vpaddd", 16),
    "fp64_avx2": ("vfmadd132pd", 12), "fp32_avx2": ("vfmadd132ps", 12),
    "int32_avx2": ("vpaddd", 12),
    "fp64_sse2": ("mulpd", 12), "fp32_sse2": ("mulps", 12), "int32_sse2": ("paddd", 12),
    "fp64_scalar": ("mulsd", 12), "fp32_scalar": ("mulss", 12),
}


def loop_body(disasm, func):
    """Instructions of the one backward-jumping loop of func (objdump -d text)."""
    m = re.search(rf"<{func}>:\n(.*?)\n\n", disasm, re.S)
    if not m:
        return None
    insns = []
    for line in m.group(1).splitlines():
        parts = line.split("\t")
        if len(parts) >= 2 and re.match(r"\s*[0-9a-f]+:", parts[0]):
            insns.append((int(parts[0].strip().rstrip(":"), 16), parts[-1].strip()))
    for addr, text in insns:
        j = re.match(r"j\w+\s+([0-9a-f]+) <", text)
        if j and int(j.group(1), 16) < addr:
            start = int(j.group(1), 16)
            return [t for a, t in insns if start <= a <= addr]
    return None


def test_hot_loops_in_assembly():
    if os.uname().machine not in ("x86_64", "amd64"):
        return
    disasm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", CPU_OBJ],
                            capture_output=True, text=True, check=True).stdout
    for func, (insn, count) in HOT_LOOPS.items():
        body = loop_body(disasm, func)
        if not check(body is not None, f"{func}: hot loop found"):
            continue
        ops = Counter(t.split()[0] for t in body)
        check(ops[insn] == count, f"{func}: {count} x {insn} per iteration, got {dict(ops)}")
        check(not any("(" in t for t in body), f"{func}: no memory operand (spill) in {body}")
        check(len(body) <= 2 * count + 3, f"{func}: nothing else in the loop: {body}")
    for func, (insns, reg) in VCLOCK_LOOPS.items():
        body = loop_body(disasm, func)
        if not check(body is not None, f"{func}: vector-loaded clock loop found"):
            continue
        vclock_loop_ok(body, insns, reg, func)


# The vector-loaded clock (cpu.c): per iteration 100 dependent adds of one register into one other, and
# beside them 50 vector FP ops of the run's width on 8 accumulators, none of them m or c.
VCLOCK_LOOPS = {"vclock_avx512": (("vfmadd231pd",), "zmm"), "vclock_avx2": (("vfmadd231pd",), "ymm"),
                "vclock_sse2": (("mulpd", "addpd"), "xmm")}


def vclock_loop_ok(body, insns, reg, func):
    ops = Counter(t.split()[0] for t in body)
    adds = [t for t in body if t.split()[0] == "add"]
    check(len(adds) == 100 and len(set(adds)) == 1 and re.fullmatch(r"add\s+%r\w+,%r\w+", adds[0])
          and adds[0].split(",")[0].split()[-1] != adds[0].split(",")[1],
          f"{func}: 100 x one register-register add, a dependent chain: {dict(ops)}")
    vec = [t for t in body if t.split()[0] in insns]
    check(len(vec) == 50 and all(f"%{reg}" in t for t in vec), f"{func}: 50 x {insns} on {reg}: {dict(ops)}")
    dests = Counter(t.split(",")[-1] for t in vec)
    sources = {r for t in vec for r in t.split()[1].split(",")[:-1]}
    check(len(dests) == 8 and not sources & set(dests) and max(dests.values()) <= 7,
          f"{func}: 8 accumulators, none of them an input: {dests} {sources}")
    check(len(body) == 100 + 50 + 2 and not any("(" in t for t in body),
          f"{func}: nothing else in the loop, no memory operand: {dict(ops)}")


# ---- --list, --describe ----

def test_list():
    rc, lines, _ = hbk("--list")
    check(rc == 0 and len(lines) == 1 and isinstance(lines[0], list), "--list is one JSON array")
    check({"cpu", "null"} <= set(lines[0] if lines and isinstance(lines[0], list) else []),
          "--list names cpu and null")


def test_version():
    rc, lines, _ = hbk("--version")
    v = lines[0] if lines else {}
    check(rc == 0 and v.get("v") == 1 and v.get("version") and
          set(v.get("build", {})) == {"cc", "cflags"}, f"--version: {v}")


def describe(kernel):
    rc, lines, raw = hbk(kernel, "--describe")
    check(rc == 0 and len(lines) == 1, f"{kernel} --describe: one line, exit 0")
    return lines[0] if lines else {}


def test_describe_is_json_schema():
    for kernel in ("cpu", "null"):
        d = describe(kernel)
        check(d.get("v") == 1 and d.get("kernel") == kernel and d.get("unit"),
              f"{kernel} describe header")
        check(isinstance(d.get("checks"), list) and all(isinstance(c, str) and c for c in d["checks"]),
              f"{kernel} describe names its server-side checks (a list of words, maybe empty)")
        params = d.get("parameters", {})
        check(params.get("type") == "object" and params.get("additionalProperties") is False,
              f"{kernel} parameters object is closed")
        props = params.get("properties", {})
        for name, prop in props.items():
            check(prop.get("description"), f"{kernel}.{name} has a description")
            check("default" in prop, f"{kernel}.{name} has a default")
            t = prop.get("type")
            if t in ("integer", "number"):
                check(prop["minimum"] <= prop["default"] <= prop["maximum"],
                      f"{kernel}.{name} default within bounds")
            elif t == "array":
                items = prop["items"]
                check(items["type"] == "integer" and 1 <= len(prop["default"]) <= prop["maxItems"]
                      and all(items["minimum"] <= v <= items["maximum"] for v in prop["default"]),
                      f"{kernel}.{name} list default within bounds")
            elif t == "string":
                check(prop["default"] in prop.get("enum", []), f"{kernel}.{name} default in enum")
            else:
                check(t == "boolean" and isinstance(prop["default"], bool), f"{kernel}.{name} type")
    cpu = describe("cpu")["parameters"]["properties"]
    check(list(cpu) == ["op", "isa", "threads", "repeats", "duration_s", "warmup_s",
                        "interval_s", "stable_cv", "max_repeats", "no_sampler", "sampler_ab", "work",
                        "quiet_wait_s", "disturbed_retries", "disturbed_wait"],
          f"cpu parameters: {list(cpu)}")
    check(cpu["op"]["enum"] == ["fp64", "fp32", "int32"], "cpu op enum")
    check(cpu["isa"]["enum"] == ["auto", *CPU_ISAS], "cpu isa enum")
    check(cpu["threads"]["default"] == [1, 2, 4, 8] and cpu["threads"]["items"]["maximum"] == 256,
          "cpu threads default and bound")
    check((cpu["interval_s"]["minimum"], cpu["interval_s"]["maximum"]) == (0.1, 60),
          "interval_s bounds")


def fmt(v):
    return str(int(v)) if float(v).is_integer() else repr(v)


def test_describe_bounds_are_the_enforced_bounds():
    """Each bound published by --describe is where the binary starts refusing."""
    props = describe("cpu")["parameters"]["properties"]
    for name, prop in props.items():
        bounded = prop["items"] if prop["type"] == "array" else prop
        if prop["type"] in ("integer", "number", "array"):
            step = 1 if bounded["type"] == "integer" else 0.05
            for value, word in ((bounded["maximum"] + step, "maximum"),
                                (bounded["minimum"] - step, "minimum")):
                expect_bad_param(["cpu", f"--{name}", fmt(value)], word)
            expect_accepted_bound(name, fmt(bounded["maximum"]))
        elif prop["type"] == "string":
            expect_bad_param(["cpu", f"--{name}", "bogus"], "is not one of")


def expect_accepted_bound(name, value):
    """The maximum itself is accepted: the run gets past parsing (killed right after start)."""
    if name in ("threads", "repeats", "duration_s", "warmup_s", "interval_s"):
        args = ["null", f"--{name}", value]
        p = subprocess.Popen([HBK, *args, *([] if name == "threads" else ["--threads", "1"])],
                             stdout=subprocess.PIPE, text=True)
        first = json.loads(p.stdout.readline() or "{}")
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=30)
        check(first.get("type") == "start", f"--{name} {value} (the maximum) is accepted")


def expect_bad_param(args, word):
    rc, lines, raw = hbk(*args)
    ok = (rc == 2 and len(lines) == 1 and lines[0].get("type") == "error"
          and lines[0].get("code") == "bad_param" and lines[0].get("v") == 1
          and word in lines[0].get("message", ""))
    check(ok, f"{args}: exit 2, one bad_param error line containing {word!r}; got {rc} {raw!r}")


# ---- bad parameters: exit 2, one error line, no start ----

BAD = [
    (["cpu", "--bogus", "1"], "unknown parameter"),
    (["cpu", "--threads", "1", "--threads", "2"], "given twice"),
    (["cpu", "--threads"], "needs a value"),
    (["cpu", "--threads", "--repeats", "2"], "needs a value"),
    (["cpu", "--threads", "1000000000"], "threads: 1000000000 is above the maximum 256"),
    (["cpu", "--threads", "4; rm -rf /"], "not an integer"),
    (["cpu", "--threads", ""], "list is empty"),
    (["cpu", "--threads", ",".join(str(i) for i in range(1, 66))], "more than 64"),
    (["cpu", "--threads", "4x"], "not an integer"),
    (["cpu", "--threads", "1" + "0" * 30], "too large"),
    (["cpu", "--repeats", "1" + "0" * 30], "too large"),
    (["cpu", "--duration_s", "1e30"], "above the maximum 86400"),
    (["cpu", "--duration_s", "nan"], "not a number"),
    (["cpu", "--op", "fp16"], "is not one of fp64, fp32, int32"),
    (["cpu", "--no_sampler", "maybe"], "not a boolean"),
    (["cpu", "--threads=4"], "not '='"),
    (["cpu", "stray"], "unexpected argument"),
    (["cpu", "--describe", "--threads", "1"], "--describe takes no other"),
    (["nosuchkernel"], "unknown kernel"),
    ([], "name a kernel"),
    (["--threads", "1"], "name a kernel"),
    (["null", "--op", "fp64"], "unknown parameter"),
]


def test_bad_params_refused_before_work():
    for args, word in BAD:
        expect_bad_param(args, word)


def test_describe_publishes_the_rules_it_enforces():
    """Every kernel's x-rules name its own parameters; each rule's example breach is refused with the
    message format of docs/kernel-protocol.md, and the limit itself is accepted."""
    for kernel in ("cpu", "disk", "memory", "net", "null", "gpu"):
        params = describe(kernel).get("parameters", {})
        rules, props = params.get("x-rules"), params.get("properties", {})
        check(isinstance(rules, list) and all(r.get("param") in props and r.get("reason") and
                                              set(r.get("when", {})) <= set(props) for r in rules),
              f"{kernel} x-rules name its parameters: {rules}")
    net = {r["param"]: r for r in describe("net")["parameters"]["x-rules"]}
    check(net.get("sizes", {}).get("maximum") == 65507 and
          net["sizes"].get("when") == {"op": {"enum": ["udp_stream", "udp_rr"]},
                                       "role": {"enum": ["loopback", "drive"]}},
          f"net publishes the UDP size rule: {net.get('sizes')}")
    cpu = {r["param"]: r for r in describe("cpu")["parameters"]["x-rules"]}
    check(cpu.get("max_repeats", {}).get("minimumParam") == "repeats" and
          cpu["max_repeats"].get("when") == {"stable_cv": {"exclusiveMinimum": 0}},
          f"cpu publishes the harness's max_repeats rule: {cpu.get('max_repeats')}")
    expect_bad_param(["net", "--op", "udp_stream", "--sizes", "1,65508"],
                     "sizes: 65508 is larger than 65507 when op is udp_stream and role is loopback; ")
    expect_bad_param(["disk", "--file_size", "1048576"], "blocks: 8388608 is larger than file_size 1048576")
    expect_bad_param(["disk", "--engine", "psync", "--iodepth", "2"],
                     "iodepth: 2 is larger than 1 when engine is psync; ")


def test_describe_declares_result_figures():
    """Every kernel publishes the figures of its result lines ("results"): type and description, a
    unit and lower_is_better for numbers, an object's members in "fields"; the harness's keys too.
    Each run of the checks is then compared with it (hbk(), tests/check_results.py)."""
    from check_results import faults
    harness = {"v", "type", "threads", "repeat", "value", "unit", "work", "seconds", "verified",
               "reason", "oversubscribed", "cpu_share", "preemptions", "sampler", "op",
               "block_bytes", "t"}
    for kernel in ("cpu", "disk", "memory", "net", "null", "gpu"):
        res = describe(kernel).get("results")
        if not check(isinstance(res, dict) and harness <= set(res), f"{kernel} declares its results"):
            continue
        for key, d in res.items():
            figs = [(key, d)] + [(f"{key}.{m}", f) for m, f in (d.get("fields") or {}).items()]
            for name, f in figs:
                number = f.get("type") in ("number", "integer")
                check(f.get("type") in ("number", "integer", "boolean", "string", "object") and
                      f.get("description") and
                      (not number or isinstance(f.get("lower_is_better"), bool)) and
                      (not number or isinstance(f.get("unit"), str) or name == "value") and
                      (number or f.get("type") == "object" or "unit" not in f),
                      f"{kernel} result {name}: {f}")
            check((d.get("type") == "object") == bool(d.get("fields")), f"{kernel} {key}: fields")
    net, disk = describe("net")["results"], describe("disk")["results"]
    check(net["sender_mbit_s"]["unit"] == "Mbit/s" and not net["sender_mbit_s"]["lower_is_better"] and
          net["latency_us"]["fields"]["p99"] == {**net["latency_us"]["fields"]["p99"], "unit": "µs",
                                                 "lower_is_better": True} and
          disk["lat_p99_us"]["unit"] == "µs" and disk["lat_p99_us"]["lower_is_better"] and
          disk["iops"]["unit"] == "IOPS", "net and disk units: Mbit/s, µs latencies, IOPS")
    check(faults(net, {"v": 1, "type": "result", "value": 1.5, "latency_us": {"p50": 3.2}}) == [] and
          faults(net, {"value": 1, "sender_mbit": 2, "latency_us": {"p42": 1}, "lost": "x"}) ==
          ["sender_mbit (undeclared)", "latency_us.p42 (undeclared)", "lost: str, declared integer"],
          "the check finds an undeclared key, an undeclared member and a wrong type")


def test_check_validates_without_running():
    rc, lines, raw = hbk("net", "--check", "--op", "udp_rr", "--sizes", "1,65507", "--poll", "busy")
    check(rc == 0 and len(lines) == 1 and lines[0].get("type") == "check" and
          lines[0].get("kernel") == "net" and lines[0].get("params", {}).get("sizes") == [1, 65507] and
          lines[0]["params"].get("role") == "loopback", f"net --check: one check line: {raw!r}")
    rc, lines, raw = hbk("cpu", "--threads", "1", "--check", "--duration_s", "86400")
    check(rc == 0 and [x.get("type") for x in lines] == ["check"] and
          lines[0]["params"].get("threads") == [1] and lines[0]["params"].get("duration_s") == 86400,
          f"--check anywhere after the kernel's name, nothing started: {raw!r}")
    for args, word in ((["net", "--check", "--op", "udp_stream", "--sizes", "65508"], "65507"),
                       (["net", "--op", "tcp_stream", "--poll", "busy", "--check"], "poll busy applies"),
                       (["null", "--check", "--repeats", "3", "--sampler_ab", "true"], "even"),
                       (["cpu", "--check", "--threads", "0"], "below the minimum 1"),
                       (["cpu", "--check", "--check"], "unknown parameter")):
        expect_bad_param(args, word)
    started = time.monotonic()
    rc, lines, _ = hbk("disk", "--check", "--workdir", "/nonexistent-dir")  # setup (and its checks) never runs
    check(rc == 0 and time.monotonic() - started < 5, "disk --check touches nothing")


# ---- runs ----

def start_fields_ok(start, what):
    for key in ("kernel", "params", "unit", "t", "timer_resolution_ns", "cpus_online",
                "affinity_cpus", "oversubscribed", "build", "expected_duration_s"):
        check(key in start, f"{what}: start has {key}")
    check(set(start.get("build", {})) == {"cc", "cflags"} and
          "-O2" in start.get("build", {}).get("cflags", ""), f"{what}: build cc/cflags")


def test_every_op_and_isa_verifies():
    combos = [(op, isa) for op in ("fp64", "fp32", "int32")
              for isa in CPU_ISAS]
    with ThreadPoolExecutor(max_workers=2) as pool:  # two at a time: most of a run is its clock
        runs = list(pool.map(lambda c: hbk("cpu", *quick("--op", c[0], "--isa", c[1])), combos))
    for (op, isa), (rc, lines, raw) in zip(combos, runs):
        what = f"cpu --op {op} --isa {isa}"
        if rc == 3:  # this CPU lacks it: the refusal must say why, before any start
            check(len(lines) == 1 and lines[0].get("code") == "unsupported"
                  and isa in lines[0].get("message", ""), f"{what}: unsupported {raw!r}")
            continue
        types = [x.get("type") for x in lines]
        check(rc == 0 and types[0] == "start" and types[-1] == "end", f"{what}: {rc} {types}")
        start, results, end = lines[0], of_type(lines, "result"), lines[-1]
        start_fields_ok(start, what)
        for key in ("isa", "isa_available", "vector_bits", "lanes", "fma", "accumulators",
                    "mix", "clock_ghz", "cpus_online", "affinity_cpus"):
            check(key in start, f"{what}: start has {key}")
        check(start.get("isa") == isa and isa in start.get("isa_available", []),
              f"{what}: isa chosen")
        check(start.get("unit") == ("GIOP/s" if op == "int32" else "GFLOP/s"), f"{what}: unit")
        check(("int_ops_per_unit" if op == "int32" else "flops_per_instruction") in start,
              f"{what}: work-per-unit fact")
        check(0.1 < (start.get("clock_ghz") or 0) < 10, f"{what}: plausible clock")
        check(len(results) == 1 and results[0]["verified"] is True and
              results[0]["value"] > 0 and results[0]["op"] == op, f"{what}: verified result")
        check(len(results) == 1 and 0.1 < (results[0].get("clock_after_ghz") or 0) < 10,
              f"{what}: the clock measured again after the phase")
        vector_clock_ok(start, results, op, isa, what)
        check(end.get("status") == "ok" and end.get("reason") is None, f"{what}: end ok")


VCLOCK_OPS = {"avx512": "vfmadd231pd zmm", "avx2": "vfmadd231pd ymm", "sse2": "mulpd+addpd xmm"}


def vector_clock_ok(start, results, op, isa, what):
    """FP ops at a vector width: the vector-loaded clock before the run and after its phase, with the run's
    vector ops; a core runs vector work at its scalar clock or lower (Intel's AVX-512 licence: as low as about
    0.6 of it), never much above (10 %: the boost moves between the two measurements): a reading above says
    the chain was shortened, one far below that the vector ops held it up. Others: null."""
    vclock, scalar = start.get("clock_vector_ghz"), start.get("clock_ghz") or 0
    after = [r.get("clock_after_vector_ghz") for r in results]
    if op == "int32" or isa == "scalar":
        check(vclock is None and start.get("clock_vector_ghz_all_cpus") is None and
              start.get("clock_vector_method") is None and after == [None] * len(results),
              f"{what}: no vector-loaded clock: {vclock} {after}")
        return
    check(isinstance(vclock, float) and 0.5 * scalar < vclock < 1.1 * scalar,
          f"{what}: vector-loaded clock {vclock} against the scalar chain's {scalar}")
    check(VCLOCK_OPS[isa] in (start.get("clock_vector_method") or ""),
          f"{what}: the method names {VCLOCK_OPS[isa]}: {start.get('clock_vector_method')}")
    check(all(isinstance(a, float) and 0.5 * scalar < a < 1.1 * scalar for a in after),
          f"{what}: the vector-loaded clock after the phase: {after}")


def test_auto_picks_an_available_isa():
    rc, lines, _ = hbk("cpu", *quick())
    start = lines[0] if lines else {}
    check(rc == 0 and start.get("isa") == (start.get("isa_available") or [None])[0],
          "isa auto takes the first (widest) available")


def test_unsupported_isa_exits_3_without_start():
    rc, lines, raw = hbk("cpu", *quick("--isa", HIDDEN_ISA), exe=HBK_TEST,
                         env={"HBK_TEST_HIDE_ISA": HIDDEN_ISA})
    check(rc == 3 and len(lines) == 1 and lines[0].get("code") == "unsupported"
          and "use --isa auto" in lines[0].get("message", ""), f"unsupported isa: {rc} {raw!r}")


def test_corruption_makes_the_run_untrusted():
    rc, lines, raw = hbk("cpu", *quick("--op", "fp32"), exe=HBK_TEST,
                         env={"HBK_TEST_CORRUPT": "1"})
    results, end = of_type(lines, "result"), lines[-1] if lines else {}
    check(rc == 4, f"corrupt: exit 4, got {rc}")
    check(len(results) == 1 and results[0]["verified"] is False and results[0].get("reason"),
          f"corrupt: result verified false {results}")
    check(end.get("type") == "end" and end.get("status") == "untrusted" and end.get("reason"),
          f"corrupt: end untrusted {end}")
    check(not of_type(lines, "error"), "corrupt: no error line")
    rc, lines, _ = hbk("cpu", *quick("--op", "fp32"), env={"HBK_TEST_CORRUPT": "1"})
    check(rc == 0, "the shipped binary has no corruption hook")


def test_samples_contiguous_and_timed():
    rc, lines, _ = hbk("cpu", "--threads", "1", "--duration_s", "3", "--repeats", "1",
                       "--warmup_s", "0.5", "--interval_s", "1")
    samples = of_type(lines, "sample")
    measured = [s for s in samples if not s["warmup"]]
    check(rc == 0, "3-s run exits 0")
    check([s["seq"] for s in samples] == list(range(len(samples))), "seq 0,1,2,... contiguous")
    check(len(measured) >= 2, f"3-s run with interval 1 gives >= 2 samples: {len(measured)}")
    # loose bounds: a loaded CI machine may wake the sampler late (the next interval is shorter)
    check(all(0.5 < s["interval_s"] < 1.5 for s in measured) and
          abs(sum(s["interval_s"] for s in measured) - 3) < 0.2, "measured intervals near 1 s")
    check(all(s["repeat"] == 0 for s in samples if s["warmup"]) and
          any(s["warmup"] for s in samples), "warm-up samples marked repeat 0")
    check(all(s["v"] == 1 and s["unit"] == "GFLOP/s" and s["threads"] == 1 and s["value"] > 0
              for s in samples), "sample fields")
    check(all(x.get("v") == 1 for x in lines), "every line has v: 1")
    end = lines[-1]
    check(end.get("samples") == len(samples), "end counts the samples")


def test_seq_contiguous_across_thread_counts():
    rc, lines, _ = hbk("null", "--threads", "1,2", "--duration_s", "0.3", "--repeats", "2",
                       "--warmup_s", "0.2", "--interval_s", "0.1")
    samples = of_type(lines, "sample")
    check(rc == 0 and [s["seq"] for s in samples] == list(range(len(samples))),
          "seq contiguous over phases and thread counts")
    check(len(of_type(lines, "result")) == 4, "one result per repeat per thread count")


def test_phase_shorter_than_interval_gets_one_sample():
    rc, lines, _ = hbk("null", "--threads", "1", "--duration_s", "0.3", "--repeats", "2",
                       "--warmup_s", "0", "--interval_s", "1")
    samples = of_type(lines, "sample")
    check(rc == 0 and [s["repeat"] for s in samples] == [1, 2] and
          all(0.25 < s["interval_s"] < 0.4 for s in samples), f"one sample per phase: {samples}")


def test_no_sampler_prints_no_samples():
    rc, lines, _ = hbk("null", "--threads", "1", "--duration_s", "0.5", "--repeats", "1",
                       "--warmup_s", "0", "--no_sampler", "true")
    check(rc == 0 and not of_type(lines, "sample") and len(of_type(lines, "result")) == 1,
          "--no_sampler: results, no samples")


def test_sampler_ab_alternates_with_and_without_in_pairs():
    rc, lines, _ = hbk("null", "--threads", "1", "--duration_s", "0.3", "--repeats", "4",
                       "--warmup_s", "0", "--interval_s", "0.1", "--sampler_ab", "true")
    res = of_type(lines, "result")
    sampled = sorted({s["repeat"] for s in of_type(lines, "sample")})
    check(rc == 0 and [r.get("sampler") for r in res] == [True, False, False, True] and sampled == [1, 4],
          f"--sampler_ab: with/without, without/with; samples only in the phases that say so: "
          f"{[r.get('sampler') for r in res]}, sampled {sampled}")
    for args, word in ((["--repeats", "3"], "even"), (["--repeats", "2", "--no_sampler", "true"], "sampler on")):
        rc, lines, _ = hbk("null", "--threads", "1", "--duration_s", "0.2", "--warmup_s", "0",
                           "--sampler_ab", "true", *args)
        check(rc == 2 and len(lines) == 1 and lines[0].get("code") == "bad_param" and
              word in lines[0].get("message", ""), f"--sampler_ab {args}: refused with {word!r}: {lines}")


def test_oversubscription_reported():
    ncpu = len(os.sched_getaffinity(0))
    rc, lines, _ = hbk("null", "--threads", str(ncpu + 1), "--duration_s", "0.2",
                       "--repeats", "1", "--warmup_s", "0")
    check(rc == 0 and lines[0].get("oversubscribed") is True and
          of_type(lines, "result")[0].get("oversubscribed") is True,
          "threads > CPUs: oversubscribed true")


def test_oversubscription_is_not_retried_as_a_disturbance():
    """Twice as many threads as CPUs wait for one another half of each phase by themselves: that wait is theirs,
    so disturbed_retries does not measure the phase again for it (it did: every 4- and 8-thread phase of the Full
    system report ran three times on a 2-CPU host). With disturbed_wait 0.4, only a wait of more than 0.9 of the
    phase (0.5 their own + 0.4) is a disturbance: a few other busy processes do not reach it."""
    ncpu = len(os.sched_getaffinity(0))
    rc, lines, _ = hbk("cpu", "--op", "int32", "--threads", str(2 * ncpu), "--duration_s", "0.3",
                       "--repeats", "2", "--warmup_s", "0", "--disturbed_retries", "2",
                       "--disturbed_wait", "0.4")
    results = of_type(lines, "result")
    check(rc == 0 and len(results) == 2, f"oversubscribed retries: rc {rc}, {len(results)} results")
    for r in results:
        check(r.get("oversubscribed") is True and r.get("tries") == 1 and r.get("wait_share", 0) > 0.3,
              f"an oversubscribed phase is measured once: tries {r.get('tries')}, "
              f"wait_share {r.get('wait_share')}")


def test_sigterm_stops_with_interrupted_error():
    p = subprocess.Popen([HBK, "null", "--threads", "2", "--duration_s", "60"],
                         stdout=subprocess.PIPE, text=True)
    first = json.loads(p.stdout.readline())  # arrives at once: stdout is flushed per line
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=10)
    last = json.loads(out.strip().splitlines()[-1]) if out.strip() else first
    check(first.get("type") == "start", "start line arrives while running")
    check(p.returncode == 1 and last.get("type") == "error" and last.get("code") == "internal"
          and last.get("message", "").startswith("interrupted"),
          f"SIGTERM: exit 1, error internal interrupted; got {p.returncode} {last}")


def test_dies_with_its_parent():
    script = ("import subprocess,sys,time;"
              "p=subprocess.Popen([sys.argv[1],'null','--threads','1','--duration_s','60'],"
              "stdout=subprocess.DEVNULL);print(p.pid,flush=True);time.sleep(60)")
    parent = subprocess.Popen([sys.executable, "-c", script, HBK], stdout=subprocess.PIPE,
                              text=True)
    pid = int(parent.stdout.readline())
    time.sleep(0.3)
    parent.kill()
    parent.wait()
    deadline = time.time() + 5
    while time.time() < deadline and alive(pid):
        time.sleep(0.05)
    check(not alive(pid), "the kernel exits when its parent dies")


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def test_null_kernel_runs():
    rc, lines, _ = hbk("null", "--threads", "1", "--duration_s", "0.2", "--repeats", "1",
                       "--warmup_s", "0")
    results = of_type(lines, "result")
    check(rc == 0 and len(results) == 1 and results[0]["value"] > 0 and
          results[0]["verified"] is True, "null kernel result")
    r = results[0] if results else {}
    check(0 < r.get("cpu_share", 0) <= 1.05 and r.get("preemptions", -1) >= 0 and
          0.2 <= r.get("seconds", 0) < 0.4, f"result cpu_share, preemptions, seconds: {r}")
    start_fields_ok(lines[0], "null")


def test_fixed_work_strong_scaling():
    """--work N: every repeat does exactly N units over its threads and stops; elapsed_s is the
    slowest thread's, the span of `seconds`, and the rate is N / elapsed_s; samples still come
    once per interval and add up to N; the duration_s cap cuts a repeat short only as an
    unverified result (elapsed_s null) and an untrusted run; fixed-duration results carry none
    of these keys."""
    work = 30_000_007
    rc, lines, _ = hbk("null", "--threads", "1,3", "--work", str(work), "--repeats", "2",
                       "--warmup_s", "0", "--duration_s", "20", "--interval_s", "0.1")
    results = of_type(lines, "result")
    check(rc == 0 and len(results) == 4, f"null --work: 4 results, rc {rc}")
    for r in results:
        what = f"null --work {work}, {r.get('threads')} threads"
        check(r.get("work") == work and r.get("work_target") == work and r.get("verified") is True,
              f"{what}: exactly the work asked for: {r}")
        el, el_min = r.get("elapsed_s"), r.get("elapsed_min_s")
        check(isinstance(el, float) and el > 0 and el == r.get("seconds") and
              isinstance(el_min, float) and 0 < el_min <= el and el < 20,
              f"{what}: elapsed_s is the slowest thread's, = seconds, before the cap: {r}")
        if isinstance(el, float) and el > 0:
            check(abs(r["value"] * 1e6 * el / work - 1) < 2e-3,
                  f"{what}: value = work / elapsed_s: {r['value']} x {el} vs {work}")
        samples = [x for x in of_type(lines, "sample")
                   if x["threads"] == r["threads"] and x["repeat"] == r["repeat"]]
        done = sum(x["value"] * 1e6 * x["interval_s"] for x in samples)
        check(samples and abs(done / work - 1) < 0.01,
              f"{what}: its {len(samples)} samples add up to the work: {done:.0f}")

    # the cpu kernel: a share that is not a whole number of chunks (2^18 steps) ends on a partial
    # chunk, verified against its closed form like any other
    cpu_work = 3 * (1 << 18) + 5
    rc, lines, _ = hbk("cpu", "--op", "int32", "--threads", "1,2", "--work", str(cpu_work),
                       "--repeats", "1", "--warmup_s", "0", "--duration_s", "30")
    results = of_type(lines, "result")
    check(rc == 0 and len(results) == 2 and
          all(r.get("work") == cpu_work and r.get("verified") is True and r.get("elapsed_s")
              for r in results), f"cpu --work {cpu_work}: exact and verified: rc {rc} {results}")
    for r in results:
        wpu = lines[0]["configs"][0]["work_per_unit"]
        check(abs(r["value"] * 1e9 * r["elapsed_s"] / (cpu_work * wpu) - 1) < 5e-3,
              f"cpu --work: value = work x work_per_unit / elapsed_s: {r}")

    # the cap: a repeat that cannot finish is not a figure
    rc, lines, _ = hbk("null", "--threads", "1", "--work", str(10**14), "--repeats", "1",
                       "--warmup_s", "0", "--duration_s", "0.3")
    results, end = of_type(lines, "result"), of_type(lines, "end")
    r = results[0] if results else {}
    check(rc == 4 and r.get("verified") is False and r.get("elapsed_s", 0) is None and
          r.get("elapsed_min_s", 0) is None and 0 < r.get("work", 0) < 10**14 and
          str(r.get("reason", "")).startswith("unfinished:") and "duration_s" in r["reason"] and
          end and end[0]["status"] == "untrusted" and "unfinished" in str(end[0]["reason"]),
          f"the duration_s cap cut the repeat short: said so, exit 4: rc {rc} {r} {end}")

    rc, lines, _ = hbk("null", *quick())
    r = (of_type(lines, "result") or [{}])[0]
    check(rc == 0 and not {"work_target", "elapsed_s", "elapsed_min_s"} & set(r),
          f"fixed duration (work 0): no fixed-work keys: {r}")
    rc, lines, _ = hbk("null", "--threads", "1,4", "--work", "3")
    check(rc == 2 and len(lines) == 1 and lines[0].get("code") == "bad_param" and
          "threads: 4 is larger than work 3" in lines[0].get("message", ""),
          f"more threads than units of work: refused before start: {lines}")
    rc, lines, _ = hbk("memory", "--work", "5", "--check")
    check(rc == 2 and lines and "work: 5 is larger than 0" in lines[0].get("message", ""),
          f"memory has no fixed-work mode: {lines}")


def test_net_kernel(): __import__("check_net").run(BUILD, check)  # tests/check_net.py
def test_repeat_until_stable(): __import__("check_stable").run(BUILD, check)  # tests/check_stable.py
def test_memory_kernel(): __import__("check_memory").run(BUILD, check)  # tests/check_memory.py
def test_gpu_kernel(): __import__("check_gpu").run(BUILD, check)  # tests/check_gpu.py
def test_disk_kernel(): __import__("check_disk").run(sys.modules[__name__])  # tests/check_disk.py
def test_cpu_quota_throttling_seen(): __import__("check_quota").run(BUILD, check)  # tests/check_quota.py
def test_files_depend_one_way(): __import__("check_layers").run(BUILD, check)  # tests/check_layers.py
def test_arm64_under_qemu():  # tests/check_arm64.py; HBK_CHECK_ARM64=0: run apart (./hostbench test does)
    if os.environ.get("HBK_CHECK_ARM64") == "0":
        print("check_arm64: run apart (HBK_CHECK_ARM64=0): python3 tests/check_arm64.py build", flush=True)
        return
    __import__("check_arm64").run(BUILD, check)


def main():
    tests = [v for k, v in globals().items() if k.startswith("test_") and callable(v)]
    for t in tests:
        before = failed
        t0 = time.time()
        try:
            t()
        except Exception as e:  # a crash in a test is a failure, not an abort of the suite
            check(False, f"{t.__name__} raised {type(e).__name__}: {e}")
        if os.environ.get("VERBOSE"):
            print(f"{t.__name__}: {'ok' if failed == before else 'FAILED'} "
                  f"({time.time() - t0:.1f} s)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
