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
from hostbench_stack import ROOT
from hostbench_stack.netns import bridge_add
from hostbench_stack.stack import PY, Stack

from tests.conftest import fresh_db

# A personal API token of an admin of the stack under test, set when a stack starts.
AUTH: dict[str, str] = {}

PARAMS = {"op": "tcp_stream", "sizes": [65536], "streams": [1], "repeats": 2, "duration_s": 0.5, "warmup_s": 0,
          "reference": True}
RR_PARAMS = {**PARAMS, "op": "tcp_rr", "sizes": [64]}
TERMINAL = {"succeeded", "failed", "untrusted", "cancelled"}




def _start_runner(stack: Stack, name: str, netns: str | None = None) -> None:
    """Like Stack.start_runner, optionally inside a network namespace (`ip netns exec` execs the runner)."""
    state_dir = stack.state / name
    env = dict(stack.env(), HOSTBENCH_SERVER=stack.control_url, HOSTBENCH_RUNNER_STATE=str(state_dir),
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
    s = Stack(state, database_url=fresh_db(db), redis_url=os.environ["REDIS_URL"], with_runner=False, bind=bind,
              extra_env={"LEASE_S": "10"})
    s.start()
    AUTH.clear()
    AUTH.update(s.admin_headers())
    return s


def _wait(url: str, run_id: int, statuses: set[str], timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    run: dict = {}
    while time.monotonic() < deadline:
        run = httpx.get(f"{url}/api/runs/{run_id}", headers=AUTH, timeout=5).json()
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


def _reference_servers(ports: dict) -> list[tuple[int, list[str]]]:
    """Processes of iperf3 or sockperf (any namespace of this PID namespace) on one of these ports."""
    wanted = {str(p) for p in ports.values()}
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and argv and Path(argv[0]).name in ("iperf3", "sockperf") and wanted & set(argv):
            found.append((int(proc.name), argv))
    return found


def _no_servers_left(ports: dict, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while _reference_servers(ports) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _reference_servers(ports) == [], f"reference servers left on ports {ports}"


def _raw_references(stack: Stack, run_id: int) -> list[dict]:
    with psycopg.connect(stack.database_url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        return conn.execute("select \"references\" from runs where id = %s", (run_id,)).fetchone()[0] or []


def _figures(refs: list[dict], tool: str) -> dict:
    entry = next(e for e in refs if e["tool"] == tool)
    return {"status": entry["status"], "reason": entry["reason"],
            **{m["name"]: (m["value"], m["unit"]) for m in entry["metrics"]}}


def _post_pair(stack: Stack, params: dict) -> tuple[dict, dict]:
    hosts = {h["name"]: h["id"] for h in httpx.get(f"{stack.url}/api/hosts", headers=AUTH, timeout=5).json()["data"]}
    r = httpx.post(f"{stack.url}/api/jobs", json={"host_ids": [hosts["server"], hosts["client"]],
                                                  "experiment": "network_pair", "params": params}, headers=AUTH, timeout=10)
    assert r.status_code == 201, r.text
    serve, drive = r.json()["runs"]
    return serve, drive


def _two_host_job(stack: Stack, server_addr: str) -> None:
    url = stack.url
    stack.wait_healthy(runners=2)
    serve, drive = _post_pair(stack, PARAMS)
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

    # Reference tools against the peer: iperf3 ran against the serving host's own iperf3 server.
    ports = drive["params"]["reference_ports"]
    figures = [f for f in rows[0]["references"] if f["tool"] == "iperf3"]
    assert len(figures) == 1
    if shutil.which("iperf3") is None:
        assert ports == {} and figures[0]["status"] == "unavailable", figures
    else:
        assert set(ports) == {"iperf3"} and figures[0]["status"] == "ok", figures
        assert figures[0]["metric"] == "received_mbps" and figures[0]["value"] > 0
        assert figures[0]["argv"][1:5] == ["-c", server_addr, "-p", str(ports["iperf3"])]
    _no_servers_left(ports)
    iperf3 = _figures(_raw_references(stack, drive["id"]), "iperf3")
    print(f"\n[{server_addr}] tcp_stream 64 KiB: ours {rows[0]['mean']:.0f} Mbit/s; iperf3 {iperf3}")

    # Round trips: sockperf against the peer's sockperf server, ping against the peer.
    serve, drive = _post_pair(stack, RR_PARAMS)
    drive = _wait(url, drive["id"], TERMINAL, timeout=120)
    assert drive["status"] == "succeeded", drive["status_reason"]
    row = drive["result"]["rows"][0]
    got = {f["tool"]: f for f in row["references"]}
    assert set(got) == {"sockperf", "ping"}, got
    for tool in ("sockperf", "ping"):
        if shutil.which(tool) is None:
            assert got[tool]["status"] == "unavailable", got[tool]
        else:
            assert got[tool]["status"] == "ok" and got[tool]["metric"] == "round_trips_per_s", got[tool]
            assert got[tool]["unit"] == "RT/s" and got[tool]["value"] > 0 and got[tool]["ratio"] > 0
    _wait(url, serve["id"], TERMINAL, timeout=30)
    _no_servers_left(drive["params"]["reference_ports"])
    raw = _raw_references(stack, drive["id"])
    print(f"[{server_addr}] tcp_rr 64 B: ours {row['mean']:.0f} RT/s, latency avg "
          f"{row['extra'].get('latency_avg_us')} µs p50 {row['extra'].get('latency_p50_us')} µs; "
          f"sockperf {_figures(raw, 'sockperf')}; ping {_figures(raw, 'ping')}")

    # Cancelled while the driver measures: the serving runner stops its reference servers too.
    serve, drive = _post_pair(stack, {**PARAMS, "repeats": 20, "duration_s": 1})
    drive = _wait(url, drive["id"], {"running", *TERMINAL}, timeout=60)
    assert drive["status"] == "running", drive["status_reason"]
    ports = httpx.get(f"{url}/api/runs/{drive['id']}", headers=AUTH, timeout=5).json()["params"]["reference_ports"]
    if shutil.which("iperf3") is not None:
        assert len(_reference_servers(ports)) == 1  # up while the job runs
    r = httpx.post(f"{url}/api/runs/{drive['id']}/cancel", headers=AUTH, timeout=10)
    assert r.status_code == 202, r.text
    serve = _wait(url, serve["id"], TERMINAL, timeout=30)
    assert serve["status"] in ("failed", "cancelled", "succeeded")
    _no_servers_left(ports)
    assert _gone(serve["kernel_info"]["pid"], timeout=30)


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
    for i, (ns, _) in enumerate(NAMESPACES.values()):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        subprocess.run(["ip", "link", "del", f"hbpair-v{i}o"], capture_output=True)  # left if a run was killed
    subprocess.run(["ip", "link", "del", BRIDGE], capture_output=True)


@pytest.fixture
def namespaces():
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    if shutil.which("ip") is None:
        pytest.skip("the `ip` command (iproute2) is missing")
    _teardown_netns()
    try:
        _ip(*bridge_add(BRIDGE))
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
