"""Repeat-until-stable (harness params stable_cv / max_repeats), on the null kernel."""
import json
import os
import subprocess


def _results(build, *args):
    out = subprocess.run([os.path.join(build, "hbk"), "null", "--threads", "1", "--duration_s", "0.2",
                          "--warmup_s", "0", *args], capture_output=True, text=True, timeout=60)
    events = [json.loads(line) for line in out.stdout.splitlines()]
    return out.returncode, [e for e in events if e["type"] == "result"], events


def run(build, check):
    rc, res, _ = _results(build, "--repeats", "2")
    check(rc == 0 and len(res) == 2, "stable_cv 0 (default) runs exactly `repeats` phases")
    rc, res, _ = _results(build, "--repeats", "2", "--stable_cv", "0.000001", "--max_repeats", "5")
    check(rc == 0 and len(res) == 5, "a CV target no real run meets stops at max_repeats")
    rc, res, _ = _results(build, "--repeats", "3", "--stable_cv", "0.5", "--max_repeats", "9")
    check(rc == 0 and len(res) == 3, "a loose CV target stops after the minimum `repeats` phases")
    rc, res, events = _results(build, "--repeats", "5", "--stable_cv", "0.1", "--max_repeats", "3")
    check(rc == 2 and events[-1]["code"] == "bad_param" and "max_repeats: 3 is below repeats 5" in events[-1]["message"]
          and not res, "max_repeats below repeats is refused before any work")
