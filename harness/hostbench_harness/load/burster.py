"""A burst of K simultaneous requests, fired from a process of its own.

`./hostbench load` simulates a thousand runners and hundreds of browsers in one asyncio process; on a small
machine that process's event loop runs late, and a request timed there counts the generator's own lateness as
the server's. A burst is the one figure with a hard bound (issue 11: none slower than 5 s), so it is timed here,
in a process that does nothing else: it opens its K connections, says `ready` on stdout, waits for a line on
stdin, sends the K requests at once and prints one JSON line (statuses, each request's time). The people a
stampede comes from are on other machines; this is the closest one machine gets to that.

    HOSTBENCH_BURST_TOKEN=... python -m hostbench_harness.load.burster HOST PORT K PATH

(the token in the environment, not in argv: other users of the machine can read a process's argv)
"""
import asyncio
import json
import os
import sys
import time
from collections import Counter

from hostbench_harness.load.base import Conn, HttpFailure, timed_parts, where


async def fire(host: str, port: int, k: int, path: str, token: str) -> dict:
    conns = [Conn(host, port) for _ in range(k)]
    opened = await asyncio.gather(*(asyncio.wait_for(c.open(), 30) for c in conns), return_exceptions=True)
    not_opened = sum(1 for o in opened if isinstance(o, BaseException))
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    statuses: Counter = Counter()
    took: list[float] = []
    timed: list[tuple[float, dict[str, float]]] = []

    async def one(c: Conn) -> None:
        t0 = time.monotonic()
        hdrs: dict[str, str] = {}
        try:
            st, hdrs, _ = await c.request("GET", path, {"Authorization": f"Bearer {token}"}, None, 60)
            statuses[st] += 1
        except HttpFailure as exc:
            statuses["timeout" if "Timeout" in str(exc) else "no answer"] += 1
        took.append(time.monotonic() - t0)
        if "server-timing" in hdrs:
            timed.append((took[-1], timed_parts(hdrs["server-timing"], t0, took[-1])))
        c.close()

    t0 = time.monotonic()
    await asyncio.gather(*(one(c) for c in conns))
    return {"statuses": {str(s): n for s, n in sorted(statuses.items(), key=str)}, "took_s": took,
            "wall_s": time.monotonic() - t0, "not_opened": not_opened, "where": where(timed)}


def main(argv: list[str]) -> int:
    token = os.environ.get("HOSTBENCH_BURST_TOKEN", "")
    if len(argv) != 4 or not token:
        print(__doc__, file=sys.stderr)
        return 2
    host, port, k, path = argv[0], int(argv[1]), int(argv[2]), argv[3]
    if not 1 <= k <= 5000 or not path.startswith("/"):
        print("error: K must be 1..5000 and PATH must start with /", file=sys.stderr)
        return 2
    print(json.dumps(asyncio.run(fire(host, port, k, path, token))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
