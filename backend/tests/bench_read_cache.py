"""What a dashboard read costs the API process, with the read cache off and on (app.core.readcache; issue 31). Not
part of the suite (its name is no test_*): run by hand,

    cd backend && ../.venv/bin/python -m pytest -q -p no:cacheprovider tests/bench_read_cache.py -s

It makes 20 runs on one registered host, then calls the application itself (ASGI, in this process: no HTTP client
counted) for each read of `./hostbench load`'s mix, ROUNDS times each, cache off and on interleaved, and prints the
CPU time (time.process_time) per read, the better of two passes; with the cache on, a pass includes a miss
whenever the kept answer is a second old. Then the mix's mean, weighted as the load generator weighs its reads.
Each run is a CPU run in its job's first state (queued): small results, so the figures are a floor of a miss."""
import asyncio
import time

from app.core.config import get_settings
from app.core.readcache import CACHE
from tests.test_light_reads import _jobs
from tests.test_read_cache import cached  # noqa: F401 - the fixture

ROUNDS = 300
MIX = [(30, "/api/hosts/{host}"), (20, "/api/runs?limit=50"), (20, "/api/runs/{run}"),
       (15, "/api/runs/{run}/samples?after_seq=-1&limit=100"), (10, "/api/runs?host_id={host}&limit=20"),
       (1, "/api/hosts")]


async def _get(app, path: str, headers: dict[str, str], answered: dict[bytes, bytes] | None = None) -> int:
    """GET path from the application itself; its status (and its headers into `answered`, if given)."""
    p, _, q = path.partition("?")
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": p, "raw_path": p.encode(), "query_string": q.encode(), "root_path": "",
             "headers": [(b"host", b"testserver"), *((k.lower().encode(), v.encode()) for k, v in headers.items())],
             "client": ("127.0.0.1", 1), "server": ("testserver", 80)}
    status = 0

    async def receive():  # noqa: ANN202
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):  # noqa: ANN001, ANN202
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            if answered is not None:
                answered.update((k.lower(), v) for k, v in message.get("headers", []))

    await app(scope, receive, send)
    return status


async def _subscribed(app, headers: dict[str, str]) -> None:
    """Until this event loop's cache subscription is live: a repeated read is answered from the cache (10 s at
    most)."""
    for _ in range(100):
        before = CACHE.hits
        await _get(app, "/api/hosts", headers)
        await _get(app, "/api/hosts", headers)
        if CACHE.hits > before:
            return
        await asyncio.sleep(0.1)


def test_bench(client, runner, admin_headers):
    from app.main import app

    host_id, _ = runner
    runs = _jobs(client, host_id, 20)
    paths = [p.format(host=host_id, run=runs[0]) for _, p in MIX]
    s = get_settings()
    keep = s.hostbench_read_cache_s

    async def measure(path: str, ttl: float) -> float:
        s.hostbench_read_cache_s = ttl
        for _ in range(10):
            st = await _get(app, path, admin_headers)
            assert st == 200, (path, st)
        t = time.process_time()
        for _ in range(ROUNDS):
            await _get(app, path, admin_headers)
        return (time.process_time() - t) / ROUNDS * 1000

    async def main() -> None:
        s.hostbench_read_cache_s = 1.0
        for _ in range(100):  # this loop's Redis subscription live: the cache answers
            before = CACHE.hits
            await _get(app, paths[0], admin_headers)
            await _get(app, paths[0], admin_headers)
            if CACHE.hits > before:
                break
            await asyncio.sleep(0.1)
        weights = {p: w for (w, _), p in zip(MIX, paths, strict=True)}
        total = {0.0: 0.0, 1.0: 0.0}
        for path in paths:
            off = [await measure(path, 0.0) for _ in range(2)]
            on = [await measure(path, 1.0) for _ in range(2)]
            print(f"BENCH {path}: off {min(off):.3f} ms, on (hits) {min(on):.3f} ms CPU per read")
            total[0.0] += weights[path] * min(off)
            total[1.0] += weights[path] * min(on)
        n = sum(weights.values())
        off_mix = total[0.0] / n
        hit_mix = total[1.0] / n
        print(f"BENCH the mix: off {off_mix:.3f} ms; on {hit_mix:.3f} ms CPU per read; hits: {CACHE.hits}")

    try:
        asyncio.run(main())
    finally:
        s.hostbench_read_cache_s = keep


def test_bench_burst_refused(cached, admin_headers, monkeypatch):  # noqa: F811 - the fixture imported
    """A burst of BURST reads of one page while every dashboard slot is held (a saturated process; the dashboard's
    wait for a slot as configured, 1 s): when each answer came (p50, max, from the burst's start), how many went
    the full way and how many admission refused, and the CPU the process spent. Run by hand (-k burst -s)."""
    import statistics

    from app.core.admission import GATES
    from app.main import app

    gate = GATES["dashboard"]
    monkeypatch.setattr(gate, "_sem", None)  # a semaphore of this test's event loop
    monkeypatch.setattr(gate, "max_waiting", BURST + 10)
    path = "/api/runs?limit=11"
    cached.get(path)

    async def main() -> None:
        await _subscribed(app, admin_headers)
        for _ in range(gate.slots):
            await gate.sem.acquire()
        CACHE.changed()
        misses, refused = CACHE.misses, gate.refused
        loop = asyncio.get_running_loop()
        t0, cpu = loop.time(), time.process_time()

        async def one() -> tuple[int, float]:
            status = await _get(app, path, admin_headers)
            return status, loop.time() - t0
        got = await asyncio.gather(*(one() for _ in range(BURST)))
        cpu = time.process_time() - cpu
        times = sorted(t for _, t in got)
        print(f"BENCH burst of {BURST}, every slot held, wait {gate.wait_s} s: "
              f"{sorted({s for s, _ in got})}; answered p50 {statistics.median(times):.2f} s, max {times[-1]:.2f} s; "
              f"full way {CACHE.misses - misses}, refused by admission {gate.refused - refused}; CPU {cpu:.2f} s")
        for _ in range(gate.slots):
            gate.sem.release()

    asyncio.run(main())


BURST = 1000
