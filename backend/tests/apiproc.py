"""A real API process (uvicorn) for tests that need one apart from the in-process TestClient."""
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

BACKEND = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def api_process(log: Path, env: dict[str, str]) -> Iterator[str]:
    """Start one; yield its base URL once /api/health answers (whatever it says); stop it afterwards."""
    port = free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1", "--port",
                                 str(port), "--no-access-log", "--http", "app.core.server:HeaderDeadline",
                                 # a stream a test left open (its reader thread blocked) ends within 2 s at the stop,
                                 # not after the 10 s this waits before killing
                                 "--timeout-graceful-shutdown", "2"], cwd=BACKEND, env=env, stdout=out, stderr=out)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text()[-3000:]
            try:
                httpx.get(f"{base}/api/health", timeout=5)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "API process did not start"
                time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
