"""`python -m hostbench_runner` as a real process: registration, credential reuse, signals, revocation,
and kill -9 of the runner in the middle of a run (the kernel dies with it; the backlog goes up later)."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runner_fakes import FakeServer, kernel_calls, pids_alive

from hostbench_runner import __version__, config
from hostbench_runner.config import SOURCE_KERNEL_BIN, load, locate_kernel
from hostbench_runner.errors import ConfigError
from hostbench_runner.startup import RESTARTED_REASON


def start_runner(server, tmp_path: Path, kernel_bin: Path, token: str | None = FakeServer.registration_token,
                 log_name: str = "runner.log", args: tuple[str, ...] = ()) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOSTBENCH_")}
    env.update(HOSTBENCH_SERVER=server.url, HOSTBENCH_RUNNER_STATE=str(tmp_path / "state"),
               HOSTBENCH_KERNEL_BIN=str(kernel_bin), HOSTBENCH_RUNNER_NAME="proc-runner",
               HOSTBENCH_RUNNER_LABELS="provider=aws,instance_type=c7a.large,region=eu-west-1",
               HOSTBENCH_FMA_PROBE="0")  # the fake kernels do not answer the probe; test_fma_probe_cache.py runs it
    if token:
        env["HOSTBENCH_REGISTRATION_TOKEN"] = token
    log = open(tmp_path / log_name, "ab")
    return subprocess.Popen([sys.executable, "-m", "hostbench_runner", *args], env=env, stdout=log, stderr=log,
                            stdin=subprocess.DEVNULL)


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout_s: float = 10) -> int:
    proc.send_signal(sig)
    return proc.wait(timeout_s)


def test_first_start_registers_then_reuses_the_credential(server, tmp_path, fake_kernel):
    kbin = fake_kernel("ok")
    proc = start_runner(server, tmp_path, kbin)
    try:
        assert server.wait_for(lambda: server.heartbeats), (tmp_path / "runner.log").read_text()
        assert server.wait_for(lambda: any(p == "/api/runner/work" for _, p, _ in server.requests))
        started = time.monotonic()
        assert stop(proc) == 0
        assert time.monotonic() - started < 15  # a pending 20 s long poll does not delay shutdown
    finally:
        proc.kill()
    reg = server.registrations[0]
    assert reg["name"] == "proc-runner" and reg["registration_token"] == FakeServer.registration_token
    assert reg["labels"] == {"provider": "aws", "instance_type": "c7a.large", "region": "eu-west-1"}
    assert reg["inventory"]["cpu"]["threads"] >= 1 and reg["inventory"]["kernel"]["version"] == "fake-1.0"
    assert "inventory" in server.heartbeats[0] and server.heartbeats[0]["run"] is None
    assert all(hb["version"] == __version__ for hb in server.heartbeats)

    cred_path = tmp_path / "state" / "credential.json"
    assert stat.S_IMODE(cred_path.stat().st_mode) == 0o600
    assert json.loads(cred_path.read_text()) == {"host_id": 7, "runner_token": FakeServer.runner_token}
    log = (tmp_path / "runner.log").read_text()
    assert FakeServer.runner_token not in log and FakeServer.registration_token not in log

    # second start: no registration token needed, no second registration
    proc = start_runner(server, tmp_path, kbin, token=None)
    try:
        n = len(server.heartbeats)
        assert server.wait_for(lambda: len(server.heartbeats) > n)
        assert stop(proc) == 0
    finally:
        proc.kill()
    assert len(server.registrations) == 1


def test_sigterm_during_a_run_reports_runner_stopped(server, tmp_path, fake_kernel):
    kbin = fake_kernel("slow")
    server.work.put({"run_id": 50, "attempt": 1, "experiment": "cpu_trace",
                     "params": {"op": "fp64", "threads": 1, "duration_s": 600}, "deadline_s": 700, "lease_s": 15})
    proc = start_runner(server, tmp_path, kbin)
    try:
        assert server.wait_for(lambda: len(server.samples.get(("50", 1), {})) >= 3), (tmp_path / "runner.log").read_text()
        assert stop(proc) == 0
    finally:
        proc.kill()
    finish = server.finishes[0][1]
    assert finish["status"] == "failed" and finish["reason"] == "runner stopped"
    seqs = server.seqs(50, 1)
    assert seqs == list(range(len(seqs)))  # no gap
    assert pids_alive([c["pid"] for c in kernel_calls(kbin)]) == []
    assert list((tmp_path / "state" / "spool").iterdir()) == []


def test_kill_9_mid_run_kills_the_kernel_and_the_next_start_uploads_the_backlog(server, tmp_path, fake_kernel):
    kbin = fake_kernel("slow")
    server.work.put({"run_id": 60, "attempt": 3, "experiment": "cpu",
                     "params": {"op": "fp64", "threads": [1], "repeats": 1, "duration_s": 60, "warmup_s": 0},
                     "deadline_s": 100, "lease_s": 15})
    proc = start_runner(server, tmp_path, kbin)
    try:
        assert server.wait_for(lambda: len(server.samples.get(("60", 3), {})) >= 2), (tmp_path / "runner.log").read_text()
        server.down = True  # what the runner measures from now on stays in its spool
        time.sleep(0.3)
        proc.kill()
        proc.wait(5)
    finally:
        proc.kill()
    kernel_pid = kernel_calls(kbin)[0]["pid"]
    deadline = time.monotonic() + 3
    while pids_alive([kernel_pid]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids_alive([kernel_pid]) == [], "the kernel outlived the runner (PR_SET_PDEATHSIG)"
    before = server.seqs(60, 3)

    server.down = False
    (tmp_path / "state" / "work" / "leftover.dat").write_bytes(b"x")
    proc = start_runner(server, tmp_path, kbin, token=None)
    try:
        assert server.wait_for(lambda: server.finishes), (tmp_path / "runner.log").read_text()
        assert stop(proc) == 0
    finally:
        proc.kill()
    after = server.seqs(60, 3)
    assert len(after) > len(before)  # samples spooled while the server was down arrived later
    assert after == list(range(len(after)))
    assert server.finishes[0] == ("60", {"attempt": 3, "status": "failed", "reason": RESTARTED_REASON,
                                         "results": [], "end": None})
    assert list((tmp_path / "state" / "work").iterdir()) == []
    assert list((tmp_path / "state" / "spool").iterdir()) == []


def test_revoked_credential_exits_non_zero(server, tmp_path, fake_kernel):
    server.revoked = True
    state = tmp_path / "state"
    state.mkdir()
    (state / "credential.json").write_text(json.dumps({"host_id": 7, "runner_token": FakeServer.runner_token}))
    (state / "credential.json").chmod(0o600)
    proc = start_runner(server, tmp_path, fake_kernel("ok"), token=None)
    try:
        assert proc.wait(10) == 3
    finally:
        proc.kill()
    log = (tmp_path / "runner.log").read_text()
    assert "revoked" in log and "credential.json" in log


def test_bad_registration_token_exits_non_zero(server, tmp_path, fake_kernel):
    proc = start_runner(server, tmp_path, fake_kernel("ok"), token="wrong")
    try:
        assert proc.wait(10) == 3
    finally:
        proc.kill()
    assert "registration token refused" in (tmp_path / "runner.log").read_text()
    assert not (tmp_path / "state" / "credential.json").exists()


def test_settings_from_env_and_arguments(tmp_path):
    env = {"HOSTBENCH_SERVER": "http://api:8000/", "HOSTBENCH_RUNNER_LABELS": "provider=aws, region=us-east-1",
           "HOSTBENCH_RUNNER_STATE": str(tmp_path), "HOSTBENCH_REGISTRATION_TOKEN": "t"}
    s = load([], env)
    assert s.server == "http://api:8000" and s.labels == {"provider": "aws", "region": "us-east-1"}
    assert s.state_dir == tmp_path and s.registration_token == "t" and s.kernel_bin == SOURCE_KERNEL_BIN
    assert "registration_token" not in repr(s)
    s = load(["--server", "https://x", "--label", "instance_type=c7a.large", "--name", "n1",
              "--kernel-bin", "/opt/hbk"], env)
    assert s.server == "https://x" and s.labels == {"instance_type": "c7a.large"} and s.name == "n1"
    assert str(s.kernel_bin) == "/opt/hbk"
    assert SOURCE_KERNEL_BIN.parts[-4:] == ("runner", "kernels", "build", "hbk")
    for bad_env in ({}, {"HOSTBENCH_SERVER": "ftp://x"}, {"HOSTBENCH_SERVER": "http://x", "HOSTBENCH_RUNNER_LABELS": "noequals"}):
        with pytest.raises(ConfigError):
            load([], bad_env)


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_the_kernel_is_found_in_order_and_the_error_names_every_place(tmp_path, monkeypatch):
    packaged, source = tmp_path / "pkg" / "_bin" / "hbk", tmp_path / "src" / "kernels" / "build" / "hbk"
    monkeypatch.setattr(config, "PACKAGED_KERNEL_BIN", packaged)
    monkeypatch.setattr(config, "SOURCE_KERNEL_BIN", source)
    on_path = tmp_path / "bin"
    missing = locate_kernel(None, str(on_path))
    assert missing.path is None and len(missing.looked) == 3
    for text in (str(packaged), str(source), str(on_path)):
        assert text in missing.missing()
    _executable(on_path / "hbk")
    assert locate_kernel(None, str(on_path)).path == on_path / "hbk"
    _executable(source)
    assert locate_kernel(None, str(on_path)).path == source
    _executable(packaged)
    assert locate_kernel(None, str(on_path)).path == packaged
    explicit = _executable(tmp_path / "mine" / "hbk")
    assert locate_kernel(str(explicit), str(on_path)).path == explicit
    nowhere = locate_kernel(str(tmp_path / "typo"), str(on_path))  # an explicit path is never second-guessed
    assert nowhere.path is None and str(tmp_path / "typo") in nowhere.missing()
    # a runner started with no kernel anywhere says where it looked when a run needs it
    s = load(["--server", "http://x"], {"PATH": str(tmp_path / "empty")})
    monkeypatch.setattr(config, "PACKAGED_KERNEL_BIN", tmp_path / "none1")
    monkeypatch.setattr(config, "SOURCE_KERNEL_BIN", tmp_path / "none2")
    s = load(["--server", "http://x"], {"PATH": str(tmp_path / "empty")})
    assert s.kernel_bin == tmp_path / "none1" and len(s.kernel_looked) == 3
    from hostbench_runner.errors import KernelUnavailable
    from hostbench_runner.kernel import KernelCatalog

    with pytest.raises(KernelUnavailable, match="looked at: .*none1.*none2.*hbk on PATH"):
        KernelCatalog(s.kernel_bin, looked=s.kernel_looked).describe("cpu")


def test_version_and_check(tmp_path, fake_kernel):
    out = subprocess.run([sys.executable, "-m", "hostbench_runner", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == f"hostbench-runner {__version__}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOSTBENCH_")}
    ok = subprocess.run([sys.executable, "-m", "hostbench_runner", "--check", "--kernel-bin", str(fake_kernel("ok"))],
                        capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "kernel cpu: ok" in ok.stdout and "fake-1.0" in ok.stdout and "ok: the kernel is runnable" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "hostbench_runner", "--check"], capture_output=True, text=True,
                         env=dict(env, HOSTBENCH_KERNEL_BIN=str(tmp_path / "nope")))
    assert bad.returncode == 1 and f"looked at: {tmp_path / 'nope'}" in bad.stdout


def test_register_only_registers_once_then_checks_the_stored_credential(server, tmp_path, fake_kernel):
    kbin = fake_kernel("ok")
    proc = start_runner(server, tmp_path, kbin, args=("--register-only",))
    assert proc.wait(20) == 0, (tmp_path / "runner.log").read_text()
    assert len(server.registrations) == 1 and server.heartbeats == []
    assert server.registrations[0]["version"] == __version__
    # the machine's id goes with it (a machine joining again gets its host back), when the machine has one
    from hostbench_runner.credential import machine_id

    assert server.registrations[0].get("machine_id") == machine_id()
    cred = tmp_path / "state" / "credential.json"
    assert stat.S_IMODE(cred.stat().st_mode) == 0o600
    # again (the installer re-run to upgrade): no second registration, the stored credential is checked
    proc = start_runner(server, tmp_path, kbin, token="reg-token-spent", args=("--register-only",))
    assert proc.wait(20) == 0, (tmp_path / "runner.log").read_text()
    assert len(server.registrations) == 1 and len(server.heartbeats) == 1
    assert "registration skipped" in (tmp_path / "runner.log").read_text()
    # a stored credential the server refuses: exit 3, saying so
    server.revoked = True
    proc = start_runner(server, tmp_path, kbin, args=("--register-only",))
    assert proc.wait(20) == 3
    assert "credential.json" in (tmp_path / "runner.log").read_text()


def test_register_only_without_a_token_is_a_settings_error(server, tmp_path, fake_kernel):
    proc = start_runner(server, tmp_path, fake_kernel("ok"), token=None, args=("--register-only",))
    assert proc.wait(20) == 2
    assert "no registration token" in (tmp_path / "runner.log").read_text()


def test_credential_rotation_stores_the_new_one_before_using_it(server, tmp_path, fake_kernel):
    kbin = fake_kernel("ok")
    proc = start_runner(server, tmp_path, kbin)
    cred = tmp_path / "state" / "credential.json"
    try:
        assert server.wait_for(lambda: server.heartbeats), (tmp_path / "runner.log").read_text()
        server.rotate = True
        assert server.wait_for(lambda: server.current_token == server.rotated_token, 10), \
            (tmp_path / "runner.log").read_text()
        assert json.loads(cred.read_text()) == {"host_id": 7, "runner_token": server.rotated_token}
        assert stat.S_IMODE(cred.stat().st_mode) == 0o600
        # the old credential is now refused by the server; the runner goes on with the new one
        # (a heartbeat every 5 s: the next one, accepted, within 15 s even on a loaded machine)
        n = len(server.heartbeats)
        assert server.wait_for(lambda: len(server.heartbeats) > n, 15)
        assert proc.poll() is None
        assert stop(proc) == 0
    finally:
        proc.kill()
    log = (tmp_path / "runner.log").read_text()
    assert "credential rotated" in log
    assert server.rotated_token not in log and FakeServer.runner_token not in log
    assert not [r for r in server.refused if r[0] != "/api/runner/work"], server.refused
    # the next start uses the stored, rotated credential
    proc = start_runner(server, tmp_path, kbin, token=None)
    try:
        n = len(server.heartbeats)
        assert server.wait_for(lambda: len(server.heartbeats) > n)
        assert stop(proc) == 0
    finally:
        proc.kill()


def test_revoked_mid_run_kills_the_kernel_and_exits_3(server, tmp_path, fake_kernel):
    kbin = fake_kernel("hang")  # ignores SIGTERM: only a kill stops it
    server.work.put({"run_id": 70, "attempt": 1, "experiment": "cpu_trace",
                     "params": {"op": "fp64", "threads": 1, "duration_s": 600}, "deadline_s": 700, "lease_s": 15})
    proc = start_runner(server, tmp_path, kbin)
    try:
        assert server.wait_for(lambda: kernel_calls(kbin) and server.samples.get(("70", 1))), (tmp_path / "runner.log").read_text()
        server.revoked = True
        assert proc.wait(15) == 3
    finally:
        proc.kill()
    pid = kernel_calls(kbin)[0]["pid"]
    deadline = time.monotonic() + 3
    while pids_alive([pid]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids_alive([pid]) == [], "the kernel outlived the revoked runner"
    # the runner ended the run itself (not only PR_SET_PDEATHSIG at its exit): the finish waits in the spool
    finishes = list((tmp_path / "state" / "spool").glob("run-70-attempt-1/finish.json"))
    assert finishes and json.loads(finishes[0].read_text())["reason"] == "runner credential revoked"
    log = (tmp_path / "runner.log").read_text()
    assert "revoked" in log and "credential.json" in log


def test_register_only_gives_up_on_a_server_it_cannot_reach(tmp_path, fake_kernel, settings_for, monkeypatch):
    import socket

    from hostbench_runner import daemon as daemon_mod
    from hostbench_runner import startup

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    monkeypatch.setattr(startup, "REGISTER_ONLY_GIVE_UP_S", 1.0)
    settings = settings_for(url, fake_kernel("ok"), register_only=True)
    started = time.monotonic()
    assert daemon_mod.Daemon(settings).main() == daemon_mod.EXIT_ERROR
    assert time.monotonic() - started < 10
    assert not settings.credential_path.exists()


def test_machine_id_from_the_machine_or_the_environment(monkeypatch, tmp_path):
    from hostbench_runner import credential

    monkeypatch.delenv("HOSTBENCH_MACHINE_ID", raising=False)
    f = tmp_path / "machine-id"
    f.write_text("0123456789abcdef0123456789abcdef\n")
    monkeypatch.setattr(credential, "MACHINE_ID_FILES", (str(tmp_path / "missing"), str(f)))
    assert credential.machine_id() == "0123456789abcdef0123456789abcdef"
    f.write_text("not an id!\n")
    assert credential.machine_id() is None
    monkeypatch.setenv("HOSTBENCH_MACHINE_ID", "node-7")
    assert credential.machine_id() == "node-7"
