#!/usr/bin/env python3
"""`hbk memory --op read` (80 MiB blocks, 1 thread, pinned to CPU 0) of two builds, with THP and with 4 KiB pages,
against likwid-bench's single-stream read `load_avx` over 160 MB, interleaved, as on-CPU rates (GB/s = 10^9 B/s):
ours from ns_per_op_on_cpu; likwid-bench's from the difference of its CPU time (user + sys) at 70 and at 10
iterations, which cancels its set-up. For docs/methodology/memory.md ("Sequential read").

    python3 bench/read_vs_likwid.py HBK_BEFORE HBK_AFTER ROUNDS"""
import json
import resource
import statistics as st
import subprocess
import sys

BLOCK = 83886080


def ours(hbk, huge):
    argv = ["taskset", "-c", "0", hbk, "memory", "--op", "read", "--blocks", str(BLOCK), "--threads", "1",
            "--duration_s", "1.5", "--warmup_s", "0.3", "--repeats", "1", "--no_sampler", "true", "--hugepages", huge]
    for line in subprocess.run(argv, capture_output=True, text=True).stdout.splitlines():
        d = json.loads(line)
        if d["type"] == "result":
            return BLOCK / d["ns_per_op_on_cpu"]
    raise SystemExit(f"{hbk}: no result")


def likwid():
    def cpu(iterations):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(["taskset", "-c", "0", "likwid-bench", "-t", "load_avx", "-w", "S0:160MB:1", "-i",
                        str(iterations)], capture_output=True, check=True)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    c10, c70 = cpu(10), cpu(70)
    return 160e6 * 60 / (c70 - c10) / 1e9


def main(before, after, rounds):
    runs = (("before, THP", lambda: ours(before, "true")), ("after, THP", lambda: ours(after, "true")),
            ("before, 4 KiB pages", lambda: ours(before, "false")),
            ("after, 4 KiB pages", lambda: ours(after, "false")),
            ("likwid-bench load_avx (4 KiB pages)", likwid))
    res = {}
    for _ in range(rounds):
        for name, f in runs:
            res.setdefault(name, []).append(f())
    for name, v in res.items():
        print(f"{name:36s} on-CPU GB/s median {st.median(v):.2f}  [{', '.join(f'{x:.2f}' for x in v)}]")
    print(json.dumps(res))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
