"""Two-host network jobs on real processes: two runner daemons (two state dirs = two hosts), the API, Celery
and the native net kernel serving on one runner and driving from the other. Loopback in this namespace, and
(as root, with `ip`) each runner in its own network namespace, reaching the API and each other over veth."""
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
import psycopg
import pytest

from hostbench_cli import ROOT
from hostbench_cli.stack import PY, Stack

PARAMS = {"op": "tcp_stream", "sizes": [65536], "streams": [1], "repeats": 2, "duration_s": 0.5, "warmup_s": 0}
TERMINAL = {"succeeded", "failed", "untrusted", "cancelled"}


def _fresh_db(name: str) -> str:
    url = os.environ["DATABASE_URL"]
    dsn = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'drop database if exists "{name}" with (force)')
        conn.execute(f'create database "{name}"')
    return url.rsplit("/", 1)[0] + f"/{name}"


def _start_runner(stack: Stack, name: str, netns: str | None = None) -> None:
    """Like Stack.start_runner, optionally inside a network namespace (`ip netns exec` execs the runner)."""
    state_dir = stack.state / name
    env = dict(stack.env(), HOSTBENCH_SERVER=stack.url, HOSTBENCH_RUNNER_STATE=str(state_dir),
               HOSTBENCH_KERNEL_BIN=str(ROOT / "runner" / "kernels" / "build" / "hbk"), HOSTBENCH_RUNNER_NAME=name,
               HOSTBENCH_REGISTRATION_TOKEN=stack.registration_token())
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    argv = [PY, "-m", "hostbench_runner"]
    if netns:
        argv = ["ip", "netns", "exec", netns, *argv]
    stack._child(f"runner-{name}", argv, ROOT / "runner", env)


def _stack(db: str, bind: str = "127.0.0.1") -> Stack:
    state = Path(tempfile.mkdtemp(prefix="hb-it-pair-", dir=os.environ.get("HOSTBENCH_TEST_STATE")))
    s = Stack(state, database_url=_fresh_db(db), redis_url=os.environ["REDIS_URL"], with_runner=False, bind=bind,
              extra_env={"LEASE_S": "10"})
    s.start(timeout=120)
    return s


def _wait(url: str, run_id: int, statuses: set[str], timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    run: dict = {}
    while time.monotonic() < deadline:
        run = httpx.get(f"{url}/api/runs/{run_id}", timeout=5).json()
        if run["status"] in statuses:
            return run
        time.sleep(0.25)
    raise AssertionError(f"run {run_id} still {run.get('status')} after {timeout} s: {run.get('status_reason')}")


def _gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True  # exited; its parent has not reaped it yet
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return True
        time.sleep(0.2)
    return False


def _two_host_job(stack: Stack, server_addr: str) -> None:
    url = stack.url
    stack.wait_healthy(120, runners=2)
    hosts = {h["name"]: h["id"] for h in httpx.get(f"{url}/api/hosts", timeout=5).json()["data"]}
    r = httpx.post(f"{url}/api/jobs", json={"host_ids": [hosts["server"], hosts["client"]],
                                            "experiment": "network_pair", "params": PARAMS}, timeout=10)
    assert r.status_code == 201, r.text
    serve, drive = r.json()["runs"]
    assert (serve["experiment"], drive["experiment"]) == ("network_serve", "network_drive")

    drive = _wait(url, drive["id"], TERMINAL, timeout=120)
    assert drive["status"] == "succeeded", drive["status_reason"]
    assert drive["params"]["peer"] == server_addr
    assert drive["kernel_info"]["role"] == "drive" and drive["kernel_info"]["peer"] == server_addr
    rows = drive["result"]["rows"]
    assert rows and all(row["unit"] == "Mbit/s" and row["mean"] > 0 and row["n"] == 2 for row in rows)

    serve = _wait(url, serve["id"], TERMINAL, timeout=30)
    assert (serve["status"], serve["status_reason"]) == ("succeeded", f"served run {drive['id']}")
    assert serve["kernel_info"]["role"] == "serve" and serve["kernel_info"]["bind"] == "0.0.0.0"
    assert drive["params"]["port"] > 0
    pid = serve["kernel_info"]["pid"]
    assert _gone(pid, timeout=30), f"the serving kernel (pid {pid}) is still running"
    log = (stack.logs / "runner-server.log").read_text()
    assert "reported listening port" in log and "lease refused" in log


def test_two_host_network_job_on_loopback():
    stack = _stack("hostbench_it_pair")
    try:
        _start_runner(stack, "server")
        _start_runner(stack, "client")
        _two_host_job(stack, server_addr="127.0.0.1")
    finally:
        stack.stop()


BRIDGE, BRIDGE_IP = "hbpair-br", "10.231.77.1"
NAMESPACES = {"server": ("hbpair-srv", "10.231.77.2"), "client": ("hbpair-cli", "10.231.77.3")}


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def _teardown_netns() -> None:
    for ns, _ in NAMESPACES.values():
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    subprocess.run(["ip", "link", "del", BRIDGE], capture_output=True)


@pytest.fixture
def namespaces():
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    if shutil.which("ip") is None:
        pytest.skip("the `ip` command (iproute2) is missing")
    _teardown_netns()
    try:
        _ip("link", "add", BRIDGE, "type", "bridge")
        _ip("addr", "add", f"{BRIDGE_IP}/24", "dev", BRIDGE)
        _ip("link", "set", BRIDGE, "up")
        for i, (ns, addr) in enumerate(NAMESPACES.values()):
            outer, inner = f"hbpair-v{i}o", f"hbpair-v{i}i"
            _ip("netns", "add", ns)
            _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
            _ip("link", "set", inner, "netns", ns)
            _ip("link", "set", outer, "master", BRIDGE)
            _ip("link", "set", outer, "up")
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", inner)
            _ip("-n", ns, "link", "set", inner, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
    except (subprocess.CalledProcessError, OSError) as exc:
        _teardown_netns()
        pytest.skip(f"cannot create network namespaces here: {getattr(exc, 'stderr', None) or exc}")
    yield
    _teardown_netns()


def test_two_host_network_job_across_network_namespaces(namespaces):
    stack = _stack("hostbench_it_pair_ns", bind=BRIDGE_IP)
    try:
        for name, (ns, _) in NAMESPACES.items():
            _start_runner(stack, name, netns=ns)
        _two_host_job(stack, server_addr=NAMESPACES["server"][1])
    finally:
        stack.stop()
