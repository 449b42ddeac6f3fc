"""The kernel binary of the e2e suite's injecting runner (injected-runner.ts): it runs the real hbk and rewrites
what it prints, one line at a time, the way a broken kernel or a broken machine would show it. The case is read
from the file named by HB_E2E_CASE_FILE when the kernel starts (the spec writes it before each job); the real
binary is HB_E2E_REAL_KERNEL. Everything else (the runner, its protocol checks, the API, PostgreSQL, Redis,
Celery, the verdicts and the dashboard) is the real thing.

Cases:
  pass         nothing rewritten
  above_peak   every result's value x 1000 (a figure no core can reach)
  tenfold      every result's value x 10 (ours well above a reference tool's figure: x 2 was not, on a VM whose
               1-s loopback runs of ours and of iperf3 each vary by 2x)
  unverified   every result verified: false with a reason; the end line says untrusted
  non_finite   the first result's value is NaN (not JSON: the runner refuses the line)
  below_floor  every result's ns_per_load / 1000 (a memory latency no machine has)
  wide_spread  the first repeat's value / 100 (a 95 % interval would reach below zero); the second repeat's
               preemptions one more than the first's (their mean is not a whole number)
"""
import json
import os
import subprocess
import sys
from typing import Any

REAL = os.environ["HB_E2E_REAL_KERNEL"]


def case() -> str:
    try:
        with open(os.environ["HB_E2E_CASE_FILE"], encoding="utf-8") as f:
            return f.read().strip() or "pass"
    except OSError:
        return "pass"


def rewrite(event: dict[str, Any], which: str, seen: dict[str, Any]) -> str:
    kind = event.get("type")
    if kind == "result":
        first = not seen.get("result")
        seen["result"] = True
        if which == "above_peak":
            event["value"] = event["value"] * 1000
        elif which == "tenfold":
            event["value"] = event["value"] * 10
        elif which == "unverified":
            event["verified"] = False
            event["reason"] = "injected by the e2e suite: the checksum did not match the closed form"
        elif which == "non_finite" and first:
            event["value"] = float("nan")
        elif which == "below_floor" and "ns_per_load" in event:
            event["ns_per_load"] = event["ns_per_load"] / 1000
        elif which == "wide_spread":
            if first:
                event["value"] = event["value"] / 100
                seen["preemptions"] = int(event.get("preemptions", 0))
            else:
                event["preemptions"] = seen.get("preemptions", 0) + 1
    elif kind == "end" and which == "unverified":
        event["status"] = "untrusted"
        event["reason"] = "injected by the e2e suite: verification failed"
    return json.dumps(event, separators=(",", ":"))  # NaN as JSON's NaN token, which JSON does not have


def main() -> int:
    args = sys.argv[1:]
    which = case()
    if which == "pass" or any(a in ("--describe", "--version", "--check") for a in args):
        os.execv(REAL, [REAL, *args])
    proc = subprocess.Popen([REAL, *args], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    seen: dict[str, Any] = {}
    for raw in proc.stdout:
        line = raw.decode("utf-8", "replace")
        try:
            event = json.loads(line)
        except ValueError:
            sys.stdout.write(line)
        else:
            sys.stdout.write(rewrite(event, which, seen) + "\n" if isinstance(event, dict) else line)
        sys.stdout.flush()
    return proc.wait()


if __name__ == "__main__":
    sys.exit(main())
