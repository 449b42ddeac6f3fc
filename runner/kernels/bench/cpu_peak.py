#!/usr/bin/env python3
"""Measured CPU rate against its physical limit: min(threads, CPUs) x clock x ops/cycle.

    python3 bench/cpu_peak.py --per-cycle fp64=32,fp32=64,int32=64 [--runs 3] [-- extra hbk args]

ops/cycle per core is a hardware fact you give (FMA pipes x lanes x 2 for fp; vector ALUs x lanes
for int32); the clock is the one hbk measured just before each run (clock_ghz for 1 thread,
clock_ghz_all_cpus for more). Prints one row per (op, threads) over all repeats of all runs:
mean, min, max, stddev, the ratio of the mean to the limit, and cpu_share (1.0 = undisturbed).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
HBK = os.path.join(HERE, "..", "build", "hbk")


def run(op, threads, duration, repeats, extra):
    argv = [HBK, "cpu", "--op", op, "--threads", threads, "--duration_s", str(duration),
            "--repeats", str(repeats), "--warmup_s", "1", *extra]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    lines = [json.loads(x) for x in out.splitlines()]
    return lines[0], [x for x in lines if x["type"] == "result"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-cycle", required=True, help="fp64=32,fp32=64,int32=64 per core")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--duration", type=float, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--runs", type=int, default=1, help="whole runs, one after another")
    ap.add_argument("extra", nargs="*", help="more hbk arguments, after --")
    a = ap.parse_args()
    per_cycle = {k: float(v) for k, v in (x.split("=") for x in a.per_cycle.split(","))}
    cpus = len(os.sched_getaffinity(0))
    print(f"{'op':6} {'thr':>3} {'n':>2} {'mean':>8} {'min':>8} {'max':>8} {'sd':>6} "
          f"{'clock':>6} {'limit':>8} {'ratio':>6} {'share':>6}  unit")
    for op, pc in per_cycle.items():
        rows = {}
        for _ in range(a.runs):
            start, results = run(op, a.threads, a.duration, a.repeats, a.extra)
            for r in results:
                t = r["threads"]
                ghz = start["clock_ghz"] if t == 1 else start["clock_ghz_all_cpus"]
                rows.setdefault(t, []).append((r["value"], ghz, r["cpu_share"], r["unit"]))
        for t, rs in sorted(rows.items()):
            vals = [x[0] for x in rs]
            ghz = statistics.mean(x[1] for x in rs)
            limit = min(t, cpus) * ghz * pc
            mean = statistics.mean(vals)
            sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
            share = statistics.mean(x[2] for x in rs)
            print(f"{op:6} {t:>3} {len(vals):>2} {mean:8.2f} {min(vals):8.2f} {max(vals):8.2f} "
                  f"{sd:6.2f} {ghz:6.3f} {limit:8.2f} {mean / limit:6.3f} {share:6.3f}  {rs[0][3]}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
