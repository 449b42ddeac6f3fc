"""The fleet, for real: a second host installed from the server's own install command.

The whole stack runs as real processes (PostgreSQL, Redis, the API bound to all addresses, Celery) with a
runner of its own. A network namespace joined to this one over a veth pair is the second host: it has no
route anywhere but the server's veth address, so everything it installs comes from the server. Inside it,
the install command the dashboard shows after "Add host" runs exactly as given (plus --dir, --no-service,
--start): it downloads the script and the runner's tarball, builds the kernels with make, registers and
starts the runner. Then: the host comes online with its own address and version, the same command run again
upgrades in place without registering again, a two-host TCP job runs between the stack's runner and the
installed one, the installed runner's credential is rotated while it works, and finally revoked: its process
exits after its next call gets 401.

Also, without the stack: the installer routes are public, the tarball is deterministic and holds no build
output, and the dashboard's commands quote every value."""
import io
import os
import re
import shlex
import signal
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

import httpx
import pytest
from hostbench_stack import ROOT
from hostbench_stack import netns as netns_lib
from hostbench_stack.stack import PY, Stack

from tests.conftest import fresh_db

# Names of our own for this process (a test suite may run beside another in the same machine), and a /30 of
# ours: 10.231.N.0/30, N from 88 up, the first not yet on any interface here.
_TAG = f"hbf{os.getpid() % 100000}"
NS = f"{_TAG}-ns"
NET_PARAMS = {"op": "tcp_stream", "sizes": [65536], "streams": [1], "repeats": 2, "duration_s": 0.5,
              "warmup_s": 0, "reference": False}
TERMINAL = {"succeeded", "failed", "untrusted", "cancelled"}
# No virtualenv on PATH: the host's own python3.
BARE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


# --- the installer routes and commands, no stack needed ---------------------------------------------------

def test_installer_routes_are_public_and_the_tarball_is_complete(anon_client):
    r = anon_client.get("/api/install/runner.sh")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/x-shellscript")
    assert r.content == (ROOT / "runner" / "install" / "install.sh").read_bytes()
    assert r.text.startswith("#!/bin/sh") and "set -eu" in r.text

    r = anon_client.get("/api/install/hostbench-runner.tar.gz")
    assert r.status_code == 200 and r.headers["content-type"] == "application/gzip"
    again = anon_client.get("/api/install/hostbench-runner.tar.gz")
    # built once, deterministic
    assert again.content == r.content and again.headers["etag"] == r.headers["etag"]
    assert anon_client.get("/api/install/hostbench-runner.tar.gz",
                           headers={"If-None-Match": r.headers["etag"]}).status_code == 304
    with tarfile.open(fileobj=io.BytesIO(r.content)) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    for needed in ("Dockerfile", "install.sh", "pyproject.toml", "setup.py", "hostbench_runner/__init__.py",
                   "hostbench_runner/__main__.py", "hostbench_common/experiments.py", "hostbench_common/reftools/fio.py",
                   "kernels/Makefile", "kernels/src/main.c"):
        assert needed in names, needed
    assert not [n for n in names if n.startswith("kernels/build") or "__pycache__" in n or n.endswith(".pyc")
                or "/_bin/" in n or n.startswith("/") or ".." in n.split("/")]
    assert all(m.uid == 0 and m.mtime == 0 and (m.isfile() or m.isdir()) for m in members)
    assert next(m for m in members if m.name == "install.sh").mode == 0o755


def test_dashboard_commands_quote_every_value():
    from app.install.service import container_command, install_command

    cmd = install_command("http://10.0.0.5:8000/", "hbreg_x'; rm -rf /")
    words = shlex.split(cmd.split(") | ", 1)[1])
    assert words[:3] == ["sh", "-s", "--"]
    assert words[3:] == ["--server", "http://10.0.0.5:8000", "--token", "hbreg_x'; rm -rf /"]
    assert "http://10.0.0.5:8000/api/install/runner.sh" in cmd
    docker = shlex.split(container_command("https://bench.example:443", "hbreg_y"))
    assert "https://bench.example:443/api/install/hostbench-runner.tar.gz" in docker
    assert "HOSTBENCH_REGISTRATION_TOKEN=hbreg_y" in docker
    assert "HOSTBENCH_SERVER=https://bench.example:443" in docker
    assert "--server https://example.com/hostbench " in install_command("https://example.com/hostbench", "t")
    for bad in ("ftp://x", "http://x/pa th", "http://x/p?q=1", "http://a b", "javascript:alert(1)",
                "http://x:8000;id", "http://x/$(id)"):
        with pytest.raises(ValueError):
            install_command(bad, "t")


# --- the fleet ----------------------------------------------------------------------------------------------

@pytest.fixture
def netns():
    """(outer address, inner address): a veth pair between this namespace and a new one (hostbench_stack.netns,
    as the browser suite's fleet test makes it; a /30 from 10.231.88-119, apart from that test's range)."""
    why = netns_lib.available()
    if why:
        pytest.skip(why)
    try:
        outer_ip, inner_ip = netns_lib.free_pair(88, 120)
        ns = netns_lib.Netns(NS, outer_ip, inner_ip).create()
    except RuntimeError as exc:
        pytest.skip(f"cannot create a network namespace here: {exc}")
    try:
        yield outer_ip, inner_ip
    finally:
        ns.destroy()




def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def _wait(what: str, predicate, timeout: float, every: float = 0.5):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"{what}: not within {timeout:.0f} s (last: {last!r})")


def _install(command: str, install_dir: Path, log: Path) -> tuple[float, list[str], str]:
    """Run the dashboard's command inside the namespace, as a person on that host would (a bare PATH, no
    HOSTBENCH_* settings); returns (seconds, the installer's timed step lines, its whole output)."""
    env = {"PATH": BARE_PATH, "HOME": str(install_dir.parent), "LANG": "C.UTF-8", "HOSTBENCH_FMA_PROBE": "0"}
    full = (f"{command} --dir {shlex.quote(str(install_dir))} --no-service --start --name fleet-ns "
            f"--label provider=netns")
    started = time.monotonic()
    r = subprocess.run(["ip", "netns", "exec", NS, "sh", "-c", full], env=env, capture_output=True, text=True,
                       timeout=600, stdin=subprocess.DEVNULL)
    took = time.monotonic() - started
    out = r.stdout + r.stderr
    log.write_text(out)
    assert r.returncode == 0, f"install command failed ({r.returncode}):\n{out[-4000:]}"
    return took, [line for line in out.splitlines() if re.search(r"\[\s*[\d.]+ s\]", line)], out


def test_a_host_installed_from_the_servers_command_joins_the_fleet(netns):
    OUTER_IP, INNER_IP = netns  # noqa: N806
    state = Path(tempfile.mkdtemp(prefix="hb-it-fleet-", dir=os.environ.get("HOSTBENCH_TEST_STATE")))
    stack = Stack(state, database_url=fresh_db(f"hostbench_it_fleet_{os.getpid()}"),
                  redis_url=os.environ["REDIS_URL"], with_runner=False, bind="0.0.0.0",  # noqa: S104 - veth + lo
                  extra_env={"LEASE_S": "10"})
    install_dir = state / "fleet-host"
    ns_pid: int | None = None
    try:
        stack.start()
        server = f"http://{OUTER_IP}:{stack.port}"  # what the namespaced host reaches the server at
        # ... and the runners' own API process there: "Add host" hands out the control port (same host)
        runner_server = f"http://{OUTER_IP}:{stack.control_port}"
        admin = stack.admin_headers()
        api = httpx.Client(base_url=server, headers=admin, timeout=15)

        # The stack's own runner, reaching the API over the veth address: recorded with that address, which
        # the namespaced host can reach for the two-host job.
        env = dict(stack.env(), HOSTBENCH_SERVER=server, HOSTBENCH_RUNNER_STATE=str(state / "runner-main"),
                   HOSTBENCH_KERNEL_BIN=str(ROOT / "runner" / "kernels" / "build" / "hbk"),
                   HOSTBENCH_RUNNER_NAME="fleet-main",
                   HOSTBENCH_REGISTRATION_TOKEN=stack.registration_token())
        env.pop("DATABASE_URL", None)
        env.pop("REDIS_URL", None)
        stack._child("runner-main", [PY, "-m", "hostbench_runner"], ROOT / "runner", env)
        stack.wait_healthy(runners=1)

        # "Add host" as an admin: a single-use token and the command to paste on the target host.
        r = api.post("/api/hosts/registration-tokens", json={"ttl_s": 900})
        assert r.status_code == 201, r.text
        command = r.json()["install_command"]
        assert f"--server {runner_server}" in command and r.json()["token"] in command

        took, steps, _ = _install(command, install_dir, state / "install-1.log")
        print(f"\ninstall in the namespace, first time: {took:.1f} s")
        for line in steps:
            print("   ", line)
        assert any("build the kernels" in s for s in steps) and any("register" in s for s in steps)
        ns_pid = int((install_dir / "runner.pid").read_text())
        assert _alive(ns_pid)
        assert (install_dir / "lib" / "hostbench_runner" / "_bin" / "hbk").is_file()
        wrapper = (install_dir / "bin" / "hostbench-runner").read_text()
        assert runner_server in wrapper and str(install_dir / "state") in wrapper

        def hosts() -> dict:
            return {h["name"]: h for h in api.get("/api/hosts").json()["data"]}

        # online, and its address recorded (from its first work poll)
        ns_host = _wait("the installed host online", lambda: (hosts().get("fleet-ns") or {}).get("online")
                        and hosts()["fleet-ns"]["address"] and hosts()["fleet-ns"], 60)
        main_host = _wait("the stack's runner's address", lambda: hosts()["fleet-main"]["address"]
                          and hosts()["fleet-main"], 30)
        assert ns_host["address"] == INNER_IP and main_host["address"] == OUTER_IP
        assert ns_host["labels"].get("provider") == "netns"
        assert ns_host["runner_version"] and not ns_host["version_mismatch"], ns_host
        assert ns_host["inventory"]["kernel"]["version"]  # the kernel the installer built, described

        # The same command again: an upgrade in place; no second registration (the token is spent anyway).
        credential = (install_dir / "state" / "credential.json").read_text()
        took2, steps2, out2 = _install(command, install_dir, state / "install-2.log")
        print(f"install in the namespace, again (upgrade in place): {took2:.1f} s")
        for line in steps2:
            print("   ", line)
        assert "registration skipped" in out2 and "stopping the runner started by an earlier --start" in out2
        assert (install_dir / "state" / "credential.json").read_text() == credential
        assert not _alive(ns_pid)
        ns_pid = int((install_dir / "runner.pid").read_text())
        assert _alive(ns_pid)
        assert [h["name"] for h in api.get("/api/hosts").json()["data"]].count("fleet-ns") == 1
        _wait("the upgraded runner online", lambda: hosts()["fleet-ns"]["online"], 60)

        # A two-host TCP job: the installed host serves, the stack's runner drives, over the veth pair.
        r = api.post("/api/jobs", json={"host_ids": [ns_host["id"], main_host["id"]],
                                        "experiment": "network_pair", "params": NET_PARAMS})
        assert r.status_code == 201, r.text
        serve, drive = r.json()["runs"]

        def run(run_id: int) -> dict:
            return api.get(f"/api/runs/{run_id}").json()

        drive = _wait("the drive run", lambda: run(drive["id"])["status"] in TERMINAL and run(drive["id"]),
                      180)
        assert drive["status"] == "succeeded", drive["status_reason"]
        assert drive["params"]["peer"] == INNER_IP and drive["kernel_info"]["peer"] == INNER_IP
        rows = drive["result"]["rows"]
        assert rows and all(row["unit"] == "Mbit/s" and row["mean"] > 0 for row in rows)
        serve = _wait("the serve run", lambda: run(serve["id"])["status"] in TERMINAL and run(serve["id"]),
                      60)
        assert serve["status"] == "succeeded", serve["status_reason"]
        print(f"tcp_stream 64 KiB {INNER_IP} <- {OUTER_IP}: {rows[0]['mean']:.0f} Mbit/s")

        # Rotation while it works: the runner stores the new credential (0600) before using it, stays online.
        r = api.post(f"/api/hosts/{ns_host['id']}/rotate-credential")
        assert r.status_code == 202, r.text
        _wait("the rotated credential stored",
              lambda: (install_dir / "state" / "credential.json").read_text() != credential, 30)
        assert (install_dir / "state" / "credential.json").stat().st_mode & 0o777 == 0o600
        _wait("the rotation completed", lambda: not hosts()["fleet-ns"]["credential_rotation_pending"], 30)
        time.sleep(3)
        assert _alive(ns_pid) and hosts()["fleet-ns"]["online"]
        assert "credential rotated" in (install_dir / "runner.log").read_text()

        # Revoked: its next call gets 401 and it stops (exit 3, nothing left running).
        r = api.post(f"/api/hosts/{ns_host['id']}/revoke")
        assert r.status_code == 200, r.text
        _wait("the revoked runner's exit", lambda: not _alive(ns_pid), 30)
        log = (install_dir / "runner.log").read_text()
        assert "HTTP 401" in log and "refused this runner's credential (401)" in log, log[-2000:]
        assert hosts()["fleet-ns"]["revoked"]
        assert stack.children["runner-main"].alive()  # the other host is untouched
    finally:
        if ns_pid is not None and _alive(ns_pid):
            os.kill(ns_pid, signal.SIGKILL)
        stack.stop()
