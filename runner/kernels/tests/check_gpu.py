#!/usr/bin/env python3
"""`make check` for the gpu kernel (called from check.py): its C asserts (closed forms, no GPU
needed), its parameters as --describe publishes them, refusals before any work, and then either
the GPU checks (every op verifies, samples per interval, rates below the peak, corruption caught,
a missing device refused) or, on a host without a usable GPU, an `unsupported` error with the
reason and exit 3, and a line saying the GPU checks were skipped and why. When the CUDA object
was built and cuobjdump + nvdisasm can be found, the hot loops of every architecture in the fat
binary are checked in SASS. Standalone: python3 tests/check_gpu.py build"""

import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys

from check_results import results_declared  # tests/check_results.py

OPS = ["fp32_fma", "fp64_fma", "int32", "dram_bw", "h2d", "d2h"]
PARAMS = ["op", "device", "bytes", "batch_ms", "threads", "repeats", "duration_s", "warmup_s",
          "interval_s", "stable_cv", "max_repeats", "no_sampler", "sampler_ab", "work", "quiet_wait_s",
          "disturbed_retries", "disturbed_wait"]
REASONS = ("built without CUDA (nvcc not found at build time)", "no CUDA driver: libcuda.so.1 not found",
           "no CUDA device", "the NVIDIA driver supports CUDA", "no usable CUDA device")
ACC, UNROLL = 8, 64
HOT = {"fma_chainsIf": "FFMA", "fma_chainsId": "DFMA", "fma_chainsIj": "IMAD"}


def run(build, check):
    hbk = os.path.join(build, "hbk")
    hbk_test = os.path.join(build, "hbk-test")
    cuda_obj = os.path.join(build, "cuda", "gpu_kernels.o")

    def call(*args, exe=hbk, env=None, timeout=180):
        p = subprocess.run([exe, "gpu", *args], capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, **(env or {})))
        lines = []
        for raw in p.stdout.splitlines():
            try:
                lines.append(json.loads(raw))
            except ValueError:
                lines.append({"type": "<not json>", "raw": raw})
        results_declared(exe, "gpu", lines, check, f"{exe} gpu {' '.join(args[:4])}")
        return p.returncode, lines, p.stdout + p.stderr

    def of(lines, t):
        return [x for x in lines if x.get("type") == t]

    def tiny(*args):
        return ["--duration_s", "0.2", "--repeats", "1", "--warmup_s", "0", *args]

    def refused(args, code, words):
        rc, lines, raw = call(*args)
        msg = lines[0].get("message", "") if len(lines) == 1 else ""
        check(rc == {"bad_param": 2, "unsupported": 3}[code] and len(lines) == 1
              and lines[0].get("code") == code and all(w in msg for w in words),
              f"gpu {args}: exit {code}, one error line with {words}; got {rc} {raw[-400:]!r}")
        return msg

    # ---- C asserts: the closed forms and host helpers ----
    p = subprocess.run([os.path.join(build, "tests", "test_gpu")], capture_output=True, text=True)
    m = re.search(r"(\d+) passed, (\d+) failed\s*$", p.stdout)
    check(m is not None and p.returncode == 0 and m.group(2) == "0",
          f"test_gpu: {p.stdout.strip()} {p.stderr.strip()}")

    # ---- parameters ----
    rc, lines, raw = call("--describe")
    d = lines[0] if rc == 0 and len(lines) == 1 else {}
    check(d.get("kernel") == "gpu" and d.get("unit") == "GFLOP/s", f"gpu --describe: {raw[:300]!r}")
    props = d.get("parameters", {}).get("properties", {})
    check(list(props) == PARAMS, f"gpu params: {list(props)}")
    check(props.get("op", {}).get("items", {}).get("enum") == OPS and
          props["op"].get("default") == OPS, f"gpu op enum and default: {props.get('op')}")
    check((props.get("device", {}).get("minimum"), props.get("device", {}).get("maximum"),
           props.get("device", {}).get("default")) == (0, 15, 0), "device 0..15, default 0")
    check((props.get("threads", {}).get("items", {}).get("maximum"),
           props.get("threads", {}).get("default")) == (1, [1]), "threads: one host thread")
    check(props.get("bytes", {}).get("default") == 0 and
          props.get("batch_ms", {}).get("default") == 20, "bytes auto, batch_ms 20")
    for name, prop in props.items():
        check(prop.get("description") and "default" in prop, f"gpu.{name} has help and default")
    built_with_cuda = os.path.exists(cuda_obj)
    check(("This build has no CUDA" in d.get("description", "")) != built_with_cuda,
          "the description says whether CUDA is built in")

    # ---- refusals before any work (parsing needs no GPU) ----
    refused(["--device", "16"], "bad_param", ["device"])
    refused(["--op", "fp16"], "bad_param", ["op"])
    refused(["--threads", "2"], "bad_param", ["threads"])
    refused(["--batch_ms", "0.5"], "bad_param", ["batch_ms"])

    # ---- the host side on a CPU stand-in for the device (tests/gpu_mock.c): no GPU needed ----
    mock = build_mock(build)
    check(mock is not None, "the CPU stand-in for the device builds (tests/gpu_mock.c)")
    if mock:
        gpu_checks(call, of, tiny, check, mock, mock, "mock")
        rc, lines, _ = call(*tiny("--op", "fp32_fma"), exe=mock, env={"HBK_MOCK_GPUS": "0"})
        check(rc == 3 and len(lines) == 1 and lines[0].get("message", "").startswith("no CUDA device"),
              f"mock without devices: unsupported, exit 3: {lines}")

    # ---- a run: on this host either the GPU checks, or unsupported with the reason ----
    rc, lines, raw = call(*tiny("--op", "fp32_fma"))
    if rc == 3:
        msg = lines[0].get("message", "") if len(lines) == 1 else ""
        check(len(lines) == 1 and lines[0].get("code") == "unsupported" and
              any(msg.startswith(r) for r in REASONS),
              f"no GPU: one error line, code unsupported, a known reason; got {raw[-400:]!r}")
        check(msg.startswith(REASONS[0]) != built_with_cuda,
              f"the reason matches the build (CUDA object {'present' if built_with_cuda else 'absent'}): "
              f"{msg}")
        print(f"gpu: GPU-only checks skipped: {msg}", flush=True)
    else:
        check(rc == 0, f"fp32_fma on the GPU: exit 0; got {rc} {raw[-400:]!r}")
        gpu_checks(call, of, tiny, check, hbk, hbk_test, "gpu")

    sass_checks(build, cuda_obj, check)


def build_mock(build):
    """build/tests/hbk-gpumock: the test objects, src/kernels/gpu.c and tests/gpu_mock.c (no CUDA)."""
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, "..", "src")
    objs = [o for o in sorted(glob.glob(os.path.join(build, "tobj", "*.o")) +
                              glob.glob(os.path.join(build, "tobj", "kernels", "*.o")))
            if not o.endswith(os.path.join("kernels", "gpu.o"))]
    out = os.path.join(build, "tests", "hbk-gpumock")
    argv = [os.environ.get("CC", "cc"), "-std=c11", "-D_GNU_SOURCE", "-pthread", "-O2", "-DHBK_TEST_HOOKS",
            "-I" + os.path.join(build, "gen"), "-I" + src, "-o", out, *objs,
            os.path.join(src, "kernels", "gpu.c"), os.path.join(here, "gpu_mock.c"), "-lm"]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr[-1500:], flush=True)
        return None
    return out


def gpu_checks(call, of, tiny, check, exe, test_exe, what):
    """Every op in one run: verified results, samples per interval, rates below the peak; the test
    build's corruption caught in every op; a device index past the last refused."""
    # the triad refuses arrays under 4x the device's L2 (50 MiB on an H100): size them from the device
    _, first, _ = call(*tiny("--op", "fp32_fma"), exe=exe)
    l2 = (first[0].get("l2_bytes") or 0) if first else 0
    size = str(max(16 << 20, -(-4 * l2 // (1 << 20)) << 20))
    rc, lines, raw = call(*tiny("--op", ",".join(OPS), "--interval_s", "0.1", "--bytes", size), exe=exe)
    check(rc == 0 and lines and lines[-1].get("status") == "ok",
          f"{what}: every op, exit 0, end ok; got {rc} {raw[-400:]!r}")
    start = lines[0] if lines else {}
    for key in ("name", "compute_capability", "sm_count", "sm_clock_mhz", "mem_clock_mhz_reported",
                "mem_bus_width_bits", "dram_gbs_theoretical", "lanes_per_sm", "peak_at_measured_clock",
                "code_used", "host_cpu"):
        check(key in start, f"{what} start has {key}")
    check(start.get("sm_count", 0) > 0 and 100 < start.get("sm_clock_mhz", 0) < 5000,
          f"{what}: sm_count and a plausible measured clock: {start.get('sm_count')} {start.get('sm_clock_mhz')}")
    implied, mhz = start.get("sm_clock_mhz_implied"), start.get("sm_clock_mhz") or 0
    check(implied is None or 0.85 * mhz <= implied <= 1.02 * mhz,
          f"{what}: the clock the FP32 FMA count implies is a little below the measured one: {implied} vs {mhz}")
    check([c.get("op") for c in start.get("configs", [])] == OPS and
          [c.get("unit") for c in start["configs"]] == ["GFLOP/s", "GFLOP/s", "GIOP/s", "GB/s", "GB/s", "GB/s"],
          f"{what}: a config per op with its unit: {start.get('configs')}")
    peak = start.get("peak_at_measured_clock", {})
    limits = {"fp32_fma": peak.get("fp32_gflops"), "fp64_fma": peak.get("fp64_gflops"),
              "int32": peak.get("int32_giops"), "dram_bw": peak.get("dram_gbs")}
    samples = of(lines, "sample")
    check([s["seq"] for s in samples] == list(range(len(samples))), f"{what}: seq contiguous")
    for op in OPS:
        res = [r for r in of(lines, "result") if r.get("op") == op]
        r = res[0] if res else {}
        check(len(res) == 1 and r.get("verified") is True and r.get("value", 0) > 0,
              f"{what} {op}: one verified result: {r}")
        check(len([s for s in samples if s.get("op") == op]) >= 1, f"{what} {op}: samples while it runs")
        check(r.get("batches", 0) >= 2 and r.get("checked", 0) > 0 and "plan" in r and
              0 < r.get("gpu_busy", 0) <= 1.2, f"{what} {op}: batches, checked, plan, gpu_busy: {r}")
        if limits.get(op):
            check(r.get("value", 0) <= limits[op] * 1.05, f"{what} {op}: {r.get('value')} <= peak {limits[op]}")
        if op in ("fp32_fma", "fp64_fma", "int32"):
            check(100 < (r.get("sm_clock_mhz") or 0) < 5000, f"{what} {op}: clock over the repeat: {r}")
        if op == "dram_bw":
            check(r.get("bytes_read") == 2 * r.get("bytes_written", -1) > 0, f"{what}: 2 reads per write")
    rc, lines, raw = call(*tiny("--op", ",".join(OPS), "--bytes", size), exe=test_exe,
                          env={"HBK_TEST_CORRUPT": "1"})
    res = {r.get("op"): r for r in of(lines, "result")}
    check(rc == 4 and lines and lines[-1].get("status") == "untrusted" and
          all(res.get(op, {}).get("verified") is False and res[op].get("reason") for op in OPS),
          f"{what}: a corrupted batch makes every op's result unverified, exit 4: "
          f"{ {op: res.get(op, {}).get('reason') for op in OPS} } {raw[-200:]!r}")
    for count in range(1, 17):
        rc, lines, _ = call(*tiny("--op", "fp32_fma", "--device", str(count)), exe=exe)
        if rc == 3:
            check(len(lines) == 1 and "does not exist" in lines[0].get("message", ""),
                  f"{what}: a device index past the last is unsupported: {lines}")
            break


def find_tool(name, build):
    """PATH, the toolkit beside the nvcc the build used, then the repository's .venv wheels."""
    found = shutil.which(name)
    if found:
        return found
    dirs = []
    try:
        with open(os.path.join(build, "gen", "cuda.txt")) as f:
            nvcc = f.read().split()[0]
        if nvcc != "none":
            dirs.append(os.path.dirname(os.path.realpath(nvcc)))
            out = subprocess.run([nvcc, "--dryrun", "-x", "cu", "-c", "/dev/null", "-o", "/dev/null"],
                                 capture_output=True, text=True).stderr
            m = re.search(r"_HERE_=(\S+)", out)
            if m:
                dirs.append(m.group(1))
    except (OSError, IndexError):
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    dirs += glob.glob(os.path.join(here, "..", "..", "..", ".venv", "lib", "python3*", "site-packages",
                                   "nvidia", "cu*", "bin"))
    for d in dirs:
        if os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    return None


def hot_loops(sass):
    """{(arch, function): [Counter of mnemonics of each loop (a backward branch's range)]}"""
    loops = {}
    arch = "?"
    for block in re.split(r"\n(?=arch = |\s*Function : )", sass):
        m = re.match(r"arch = (\S+)", block)
        if m:
            arch = m.group(1)
            continue
        m = re.match(r"\s*Function : (\S+)", block)
        if not m:
            continue
        ins = [(int(a, 16), t.strip()) for a, t in re.findall(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);", block)]
        found = []
        for addr, text in ins:
            b = re.match(r"(?:@!?U?P\w+\s+)?BRA\s+(?:\S+\s+)?0x([0-9a-f]+)", text)
            if b and int(b.group(1), 16) < addr:
                lo = int(b.group(1), 16)
                found.append(collections.Counter(
                    (t.split()[1] if t.startswith("@") else t.split()[0]) for a, t in ins if lo <= a <= addr))
        loops[(arch, m.group(1))] = found
    return loops


def sass_checks(build, cuda_obj, check):
    if not os.path.exists(cuda_obj):
        return
    cuobjdump, nvdisasm = find_tool("cuobjdump", build), find_tool("nvdisasm", build)
    if not cuobjdump or not nvdisasm:
        print("gpu: SASS hot-loop checks skipped: cuobjdump and nvdisasm not found (PATH, the CUDA "
              "toolkit, or the nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm wheels in .venv)", flush=True)
        return
    env = dict(os.environ, PATH=os.path.dirname(nvdisasm) + os.pathsep + os.environ.get("PATH", ""))
    p = subprocess.run([cuobjdump, "-sass", cuda_obj], capture_output=True, text=True, env=env, timeout=120)
    check(p.returncode == 0, f"cuobjdump -sass: {p.stderr[-300:]}")
    loops = hot_loops(p.stdout)
    archs = sorted({a for a, _ in loops})
    check({"sm_80", "sm_90"} <= set(archs), f"the fat binary has sm_80 and sm_90 code: {archs}")
    for (arch, func), found in sorted(loops.items()):
        for key, op in HOT.items():
            if key not in func:
                continue
            hot = [c for c in found if c[op] >= ACC * UNROLL]
            c = hot[0] if hot else collections.Counter()
            other = sum(c.values()) - c[op]
            check(len(hot) == 1 and c[op] == ACC * UNROLL and other <= 8 and
                  not any(k.startswith(("LDL", "STL", "LDG", "STG")) for k in c),
                  f"{arch} {func}: one loop of {ACC * UNROLL} {op}, <= 8 others, no memory: {dict(c)}")
        if "triad" in func and "init" not in func:
            c = max(found, key=lambda x: x["LDG.E.128.CONSTANT"] + x["LDG.E.128"], default=collections.Counter())
            loads = sum(v for k, v in c.items() if k.startswith("LDG.E.128"))
            stores = sum(v for k, v in c.items() if k.startswith("STG.E.128"))
            check(loads == 8 and stores == 4, f"{arch} triad: 16-byte loads x8, stores x4: {dict(c)}")


if __name__ == "__main__":
    build_dir = sys.argv[1] if len(sys.argv) > 1 else "build"
    counts = {"passed": 0, "failed": 0}

    def check(cond, what):
        counts["passed" if cond else "failed"] += 1
        if not cond:
            print(f"FAIL {what}", flush=True)
        return cond

    run(build_dir, check)
    print(f"{counts['passed']} passed, {counts['failed']} failed")
    sys.exit(1 if counts["failed"] else 0)
