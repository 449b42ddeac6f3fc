"""Time one `./hostbench up` of a checkout, from the command's start to "hostbench is up" (healthy, its runner
online), then stop it (SIGINT); optionally with the whole command held by a cgroup to SHARE of one CPU
(hostbench_stack.cpulimit). Prints one line: the time, the load average, and how many workers the logs say were
killed or died (docs/scaling.md, "Cold start").

    .venv/bin/python stack/tools/up_start_time.py [--share 0.25] [--checkout DIR] [--label TEXT]

A fresh clone as DIR times a cold start (install, build, start). Run it beside `stress-ng --cpu 4` for a busy
machine."""
import argparse
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from hostbench_stack.cpulimit import CpuLimit

KILLED = re.compile(r"Child process \[\d+\] died|killed by signal")


def start_once(checkout: Path, limit: CpuLimit | None) -> tuple[float | None, list[str]]:
    env = {k: v for k, v in os.environ.items() if k != "HOSTBENCH_T0"}
    t0 = time.monotonic()
    p = subprocess.Popen(["./hostbench", "up"], cwd=checkout, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True,
                         preexec_fn=(lambda: limit.add(os.getpid())) if limit is not None else None)
    up: float | None = None
    out: list[str] = []
    assert p.stdout is not None
    for line in p.stdout:
        out.append(line)
        if up is None and "hostbench is up" in line:
            up = time.monotonic() - t0
            p.send_signal(signal.SIGINT)
        elif up is None and "error" in line:
            p.send_signal(signal.SIGINT)
    p.wait()
    return up, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--share", type=float, default=0.0, help="share of one CPU for the whole command (0: no limit)")
    ap.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[2])
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    logs = args.checkout / ".hostbench" / "logs"
    if args.share > 0:
        with CpuLimit("up-start-time", args.share) as limit:
            up, out = start_once(args.checkout, limit)
            throttled = f"; throttled periods {limit.stat()['nr_throttled']}"
    else:
        up, out = start_once(args.checkout, None)
        throttled = ""
    killed = sum(len(KILLED.findall(f.read_text(errors="replace"))) for f in logs.glob("*.log")) if logs.is_dir() else 0
    what = f"healthy, runner online in {up:.0f} s" if up is not None else "FAILED"
    load = os.getloadavg()[0]
    print(f"{args.label or args.checkout}: {what}; load {load:.1f}; kill lines in logs {killed}{throttled}")
    if up is None:
        print("".join(out[-30:]))
    return 0 if up is not None else 1


if __name__ == "__main__":
    raise SystemExit(main())
