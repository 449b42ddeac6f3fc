#!/usr/bin/env python3
"""Two hbk builds, A and B, on the same memory ops, interleaved (A B, then B A, ...), for the before/after
figures in docs/methodology/memory.md. The rate compared is the on-CPU one: bytes moved per second of the
worker threads' own CPU time (block ops: threads x bytes per op / ns_per_op_on_cpu; STREAM ops: value /
cpu_share), so that other processes taking the CPUs of a shared host do not decide the comparison; the
wall-clock value and the cpu_share range are printed beside it.

    python3 bench/mem_ab.py A_HBK B_HBK ROUNDS SPEC... [--threads N]
    SPEC: op[:block_bytes], e.g. read:83886080 rand_read:83886080 stream_triad

Prints one line per spec (GB/s = 10^9 B/s) and, last, one JSON line with every pair's figures."""

import json
import statistics as st
import subprocess
import sys


def run(hbk, op, block, threads):
    argv = [hbk, "memory", "--op", op, "--threads", str(threads), "--duration_s", "1.5", "--warmup_s", "0.3",
            "--repeats", "1", "--no_sampler", "true"]
    if block:
        argv += ["--blocks", str(block)]
    out = subprocess.run(argv, capture_output=True, text=True).stdout
    for line in out.splitlines():
        d = json.loads(line)
        if d["type"] == "result":
            wall = d["value"] / 1000
            if "ns_per_op_on_cpu" in d:
                return wall, threads * block * (2 if op == "copy" else 1) / d["ns_per_op_on_cpu"], d["cpu_share"]
            return wall, wall / d["cpu_share"], d["cpu_share"]
        if d["type"] == "error":
            raise SystemExit(f"{hbk} {op}: {d['message']}")
    raise SystemExit(f"{hbk} {op}: no result")


def main(argv):
    threads = 1
    if "--threads" in argv:
        i = argv.index("--threads")
        threads = int(argv[i + 1])
        del argv[i:i + 2]
    a, b, rounds, specs = argv[0], argv[1], int(argv[2]), argv[3:]
    res = {}
    for r in range(rounds):
        for spec in specs:
            op, _, blk = spec.partition(":")
            order = ((0, a), (1, b)) if r % 2 == 0 else ((1, b), (0, a))
            for side, hbk in order:
                res.setdefault(spec, ([], []))[side].append(run(hbk, op, int(blk) if blk else 0, threads))
    report = {}
    for spec in specs:
        ra, rb = res[spec]
        ratios = [y[1] / x[1] for x, y in zip(ra, rb)]
        med_a, med_b = st.median(x[1] for x in ra), st.median(x[1] for x in rb)
        print(f"{spec:20s} A {med_a:6.2f} GB/s on-CPU (wall {st.median(x[0] for x in ra):5.2f}, cpu_share "
              f"{min(x[2] for x in ra):.2f}-{max(x[2] for x in ra):.2f})  B {med_b:6.2f} (wall "
              f"{st.median(x[0] for x in rb):5.2f}, cpu_share {min(x[2] for x in rb):.2f}-{max(x[2] for x in rb):.2f})"
              f"  B/A median {st.median(ratios):.3f} [{', '.join(f'{q:.2f}' for q in ratios)}]", flush=True)
        report[spec] = {"a_on_cpu_gbs": ra, "b_on_cpu_gbs": rb, "ratios": ratios}
    print(json.dumps({"threads": threads, "rounds": rounds, "pairs": report}))


if __name__ == "__main__":
    main(sys.argv[1:])
