"""./hostbench load's judgement and its burst process, without a stack (the small load run in CI uses both
against the real one)."""
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from hostbench_harness.load import server_errors
from hostbench_harness.load.base import Figures, watch_loop_lag

CLI = Path(__file__).resolve().parents[1]


def test_a_503_is_a_refusal_and_a_500_is_a_fault() -> None:
    errors = {"read 503": 40, "stream-open 429": 3, "read timeout": 1, "read 500": 2, "heartbeat 502": 1}
    bursts = [{"statuses": {"200": 10, "503": 90}}, {"statuses": {"200": 1, "500": 4, "no answer": 2}}]
    assert server_errors(errors, bursts) == 2 + 1 + 4
    assert server_errors({"read 503": 9, "lease 409": 1}, [{"statuses": {"503": 100}}]) == 0


def test_the_generators_loop_lag_is_counted_only_while_measuring() -> None:
    async def go() -> Figures:
        fig = Figures()
        task = asyncio.create_task(watch_loop_lag(fig, 0.01))
        await asyncio.sleep(0.05)
        assert fig.loop_lag == []
        fig.measuring = True
        await asyncio.sleep(0.05)
        time.sleep(0.2)  # the loop blocked: the next tick is late by about that
        await asyncio.sleep(0.03)
        task.cancel()
        return fig

    fig = asyncio.run(go())
    assert fig.loop_lag and max(fig.loop_lag) >= 0.15


def test_the_burst_process_times_every_request_against_a_real_server() -> None:
    """A tiny HTTP server answering 503 to every request: the burst process opens its K connections, says ready,
    fires on a line of stdin and reports each status and time."""
    async def serve() -> tuple[asyncio.Server, int]:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            head = await reader.readuntil(b"\r\n\r\n")
            assert b"Authorization: Bearer tok" in head
            now = time.monotonic()  # the server's clock is this machine's: Server-Timing's t0 and t1 on it
            timing = f'cache;dur=20.0, total;dur=30.0, t0;desc="{now:.6f}", t1;desc="{now:.6f}"'.encode()
            writer.write(b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nServer-Timing: " + timing
                         + b"\r\nContent-Length: 2\r\n\r\n{}")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        return server, server.sockets[0].getsockname()[1]

    async def go() -> dict:
        server, port = await serve()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hostbench_harness.load.burster", "127.0.0.1", str(port), "20", "/api/hosts/1",
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=CLI,
            env={**os.environ, "HOSTBENCH_BURST_TOKEN": "tok", "PYTHONPATH": str(CLI)})
        assert proc.stdin and proc.stdout
        assert (await asyncio.wait_for(proc.stdout.readline(), 30)).strip() == b"ready"
        proc.stdin.write(b"go\n")
        await proc.stdin.drain()
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        await proc.wait()
        server.close()
        return json.loads(line)

    out = asyncio.run(go())
    assert out["statuses"] == {"503": 20}
    assert len(out["took_s"]) == 20 and out["not_opened"] == 0
    where = out["where"]["all"]  # where each answer's time went, from its Server-Timing and this process's clock
    assert where["n"] == 20 and where["cache"]["max_ms"] == 20.0 and where["total"]["mean_ms"] == 30.0, where
    assert where["before"]["max_ms"] >= 0 and where["after"]["max_ms"] >= 0, where
    assert max(out["took_s"]) * 1000 + 1 >= where["before"]["max_ms"], where


def test_the_burst_process_refuses_bad_arguments_and_a_missing_token() -> None:
    env = {k: v for k, v in os.environ.items() if k != "HOSTBENCH_BURST_TOKEN"}
    env["PYTHONPATH"] = str(CLI)
    r = subprocess.run([sys.executable, "-m", "hostbench_harness.load.burster", "127.0.0.1", "1", "5", "/x"],
                       cwd=CLI, env=env, capture_output=True, text=True, timeout=30, check=False)
    assert r.returncode == 2
    env["HOSTBENCH_BURST_TOKEN"] = "t"
    r = subprocess.run([sys.executable, "-m", "hostbench_harness.load.burster", "127.0.0.1", "1", "0", "/x"],
                       cwd=CLI, env=env, capture_output=True, text=True, timeout=30, check=False)
    assert r.returncode == 2 and "K must be" in r.stderr


def test_the_health_probe_counts_each_refusal_by_what_it_said() -> None:
    """Issue 31: a probe that was not 200 was only counted as such. A tiny server answers 200, a busy 503 and a
    database 503 in turn: the figures say which answers came, with X-Hostbench-Unavailable and the detail."""
    from types import SimpleNamespace

    from hostbench_harness.load import browsers, health_figures

    answers = [
        (200, b"", b'{"status":"ok"}'),
        (503, b"Retry-After: 1\r\n", b'{"detail":"the server is busy; retry shortly"}'),
        (503, b"Retry-After: 5\r\nX-Hostbench-Unavailable: database\r\n",
         b'{"detail":"the database is not answering (not answering for 7 s); retry shortly"}'),
    ]

    async def go() -> Figures:
        served = 0

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal served
            while True:
                try:
                    await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    break
                st, extra, body = answers[min(served, len(answers) - 1)]
                served += 1
                writer.write(b"HTTP/1.1 %d X\r\n%sContent-Length: %d\r\n\r\n%s" % (st, extra, len(body), body))
                await writer.drain()
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        load = SimpleNamespace(host="127.0.0.1", port=server.sockets[0].getsockname()[1], fig=Figures(measuring=True))
        old = browsers.HEALTH_PROBE_S
        browsers.HEALTH_PROBE_S = 0.01
        try:
            task = asyncio.create_task(browsers.health_probe(load))  # type: ignore[arg-type]
            while served < 4:
                await asyncio.sleep(0.01)
            task.cancel()
        finally:
            browsers.HEALTH_PROBE_S = old
        server.close()
        return load.fig

    fig = asyncio.run(go())
    out = health_figures(fig)
    assert out["health_probes"] >= 4 and out["health_not_200"] == out["health_probes"] - 1
    why = out["health_not_200_why"]
    assert why["503: the server is busy; retry shortly"] == 1
    db = "503 unavailable=database: the database is not answering (not answering for 7 s); retry shortly"
    assert why[db] == out["health_not_200"] - 1, why
