"""CPU (user + system) of starting the API as `./hostbench up` starts it, side by side across checkouts
(docs/scaling.md, "Cold start"): every API process of both kinds (2 dashboard + 2 control workers, as on two CPUs),
from their start until every worker has started its application and both ports answer /api/health 200; and the
CPU of one `import app.main`. Trials alternate between the checkouts; the median of each is printed.

    .venv/bin/python stack/tools/api_start_cpu.py OLD_CHECKOUT NEW_CHECKOUT [...] [--trials 5]

Each checkout's own `hostbench_stack.stack.Stack.start_api` starts its processes (the same venv, one embedded
PostgreSQL and Redis for all, started from this checkout). The machine's load average is printed with each trial:
on a shared machine the figures are disturbed by the others' work."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

DRIVER = r'''
import json, sys, time
from pathlib import Path
import httpx, psutil
from hostbench_stack.services import free_port
from hostbench_stack.stack import Stack

state, db, redis = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
stack = Stack(state, free_port(), durable=False, with_runner=False, database_url=db, redis_url=redis,
              api_workers=2, control_workers=2)
stack.migrated = True
stack.start_api()
roots = [c.proc.pid for c in stack.children.values()]
deadline = time.monotonic() + 900
try:
    while True:
        assert time.monotonic() < deadline, "not healthy within 900 s"
        logs = "".join(c.log.read_text(errors="replace") for c in stack.children.values())
        if logs.count("Application startup complete") >= 4:
            try:
                if all(httpx.get(f"{u}/api/health", timeout=30).status_code == 200
                       for u in (stack.url, stack.control_url)):
                    break
            except httpx.HTTPError:
                pass
        time.sleep(0.1)
    total = 0.0
    for pid in roots:
        p = psutil.Process(pid)
        t = p.cpu_times()
        total += t.user + t.system + t.children_user + t.children_system  # its children that exited
        for c in p.children(recursive=True):
            try:
                t = c.cpu_times()
                total += t.user + t.system
            except psutil.NoSuchProcess:
                pass
    print(json.dumps({"start_cpu_s": round(total, 2), "processes": len(roots)}))
finally:
    stack.stop()
'''

IMPORT = ("import resource, app.main; r = resource.getrusage(resource.RUSAGE_SELF); "
          "print(round(r.ru_utime + r.ru_stime, 2))")


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("checkouts", nargs="+", type=Path)
    p.add_argument("--trials", type=int, default=5)
    args = p.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from hostbench_stack.stack import Stack

    state = Path(tempfile.mkdtemp(prefix="api-start-cpu-"))
    services = Stack(state / "services", durable=False, with_runner=False)
    services.start_services()
    services.migrate()
    figures: dict[str, dict[str, list[float]]] = {str(c): {"start": [], "import": []} for c in args.checkouts}
    try:
        for trial in range(args.trials):
            for c in args.checkouts:
                env = dict(os.environ, PYTHONPATH=str(c / "cli"), DATABASE_URL=services.database_url,
                           REDIS_URL=services.redis_url)
                imp = subprocess.run([sys.executable, "-c", IMPORT], cwd=c / "backend", env=env, check=True,
                                     capture_output=True, text=True)
                figures[str(c)]["import"].append(float(imp.stdout.split()[-1]))
                out = subprocess.run([sys.executable, "-c", DRIVER, str(state / f"{trial}-{c.name}"),
                                      services.database_url, services.redis_url], cwd=c, env=env, check=True,
                                     capture_output=True, text=True)
                got = json.loads(out.stdout.strip().splitlines()[-1])
                figures[str(c)]["start"].append(got["start_cpu_s"])
                print(f"trial {trial + 1} {c}: import {figures[str(c)]['import'][-1]} s, API start "
                      f"{got['start_cpu_s']} s CPU ({got['processes']} supervised processes), load {load()}",
                      flush=True)
    finally:
        services.stop()
    for c, f in figures.items():
        print(f"{c}: median of {args.trials}: import app.main {statistics.median(f['import']):.2f} s, "
              f"API start (2 + 2 workers, to healthy) {statistics.median(f['start']):.2f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
