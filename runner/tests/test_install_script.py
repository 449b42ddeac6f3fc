"""install/install.sh, the installer the server hands out, on a host that has neither curl, wget nor tar: it
downloads with python3's urllib, unpacks with python3's tarfile, builds the kernels with make, registers once
and starts the runner in the background. Also its one-line errors. (The whole path through the real server,
in a network namespace, upgrade included: backend/tests/test_install_fleet.py.)"""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import tarfile
from pathlib import Path

import pytest
from runner_fakes import FakeServer, pids_alive

RUNNER = Path(__file__).resolve().parents[1]
SCRIPT = RUNNER / "install" / "install.sh"


def _tarball(extra: dict[str, bytes] | None = None) -> bytes:
    """The runner's sources as the server's tarball holds them (backend/app/install/service.py), plus `extra` files
    (name -> content)."""
    raw = io.BytesIO()
    skip = ("build", "__pycache__", "_bin")
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        tar.add(SCRIPT, "install.sh")
        tar.add(RUNNER / "install" / "Dockerfile", "Dockerfile")
        for name in ("pyproject.toml", "setup.py"):
            tar.add(RUNNER / name, name)
        for tree in ("hostbench_runner", "kernels"):
            tar.add(RUNNER / tree, tree, filter=lambda t: None if set(t.name.split("/")) & set(skip) else t)
        tar.add(RUNNER.parent / "common" / "hostbench_common", "hostbench_common",
                filter=lambda t: None if set(t.name.split("/")) & set(skip) else t)
        for name, content in (extra or {}).items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    return raw.getvalue()


def _bare_path(tmp_path: Path, without: set[str]) -> str:
    """A PATH of this host's commands minus `without` (as a host that lacks them)."""
    bindir = tmp_path / "hostbin"
    bindir.mkdir()
    for d in ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            target = bindir / name
            if name in without or target.exists() or name.startswith("python3") and d == "/usr/local/bin":
                continue
            src = Path(d) / name
            if src.is_file() and os.access(src, os.X_OK):
                target.symlink_to(src)
    return str(bindir)


def _sh(args: list[str], env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def test_install_with_python_only_for_download_and_unpack(server, tmp_path):
    server.files["/api/install/hostbench-runner.tar.gz"] = _tarball()
    path = _bare_path(tmp_path, {"curl", "wget", "tar", "gzip"})
    assert shutil.which("python3", path=path) and not shutil.which("curl", path=path)
    env = {"PATH": path, "HOME": str(tmp_path), "LANG": "C.UTF-8", "HOSTBENCH_FMA_PROBE": "0"}  # probe: its own test
    target = tmp_path / "opt" / "runner"
    scratch = tmp_path / "scratch-disk"
    scratch.mkdir()
    out = _sh(["--server", server.url + "/", "--token", FakeServer.registration_token, "--dir", str(target),
               "--name", "script-host", "--label", "provider=it's", f"--disk-target=scratch={scratch}",
               "--no-service", "--start"], env)
    text = out.stdout + out.stderr
    print("\n" + out.stdout)
    try:
        assert out.returncode == 0, text
        pid = int((target / "runner.pid").read_text())
        assert server.wait_for(lambda: server.heartbeats, 20), (target / "runner.log").read_text()
        assert len(server.registrations) == 1
        reg = server.registrations[0]
        assert reg["name"] == "script-host" and reg["labels"] == {"provider": "it's"}
        # the disk target reached the runner (its --check and registration) and its inventory names it
        assert [t["name"] for t in reg["inventory"]["disks"]["targets"]] == ["scratch"], reg["inventory"]["disks"]
        assert (target / "state" / "credential.json").stat().st_mode & 0o777 == 0o600
        for step in ("download the runner", "unpack", "build the kernels (make)", "register with", "total"):
            assert any(step in line and " s] " in line for line in text.splitlines()), (step, text)
        assert "no systemd" in text or "--start" in text or "runner started" in text
        # the wrapper: server, state and kernel baked in, nothing of the token
        wrapper = (target / "bin" / "hostbench-runner").read_text()
        assert server.url in wrapper and str(target / "state") in wrapper and "_bin/hbk" in wrapper
        assert FakeServer.registration_token not in wrapper
        # Again, without --start and without a token: an upgrade in place. The --start runner is stopped, the
        # credential kept, nothing registered again, and the way to start it printed.
        credential = (target / "state" / "credential.json").read_text()
        again = _sh(["--server", server.url, "--dir", str(target), "--no-service"], env)
        text = again.stdout + again.stderr
        assert again.returncode == 0, text
        assert "registration skipped" in text and f"stopping the runner started by an earlier --start (pid {pid})" \
            in text
        assert f"start the runner with: {target}/bin/hostbench-runner" in text
        assert "was stopped for the upgrade" in text
        # the same kernel sources, compiler and machine: the installed build is reused, not made again
        assert any("build the kernels (sources unchanged since the installed build: reused)" in line
                   for line in text.splitlines()), text
        assert "build the kernels (make)" not in text
        assert pids_alive([pid]) == [] and len(server.registrations) == 1
        assert (target / "state" / "credential.json").read_text() == credential
        assert not (target / "runner.pid").exists()
        assert sorted(p.name for p in target.iterdir()) == ["bin", "lib", "register.log", "runner.log", "src",
                                                             "state"]
        # one kernel source file changed: built afresh (here with a compiler that fails at once, which also shows
        # that a failed build leaves the installed runner as it was)
        server.files["/api/install/hostbench-runner.tar.gz"] = _tarball({"kernels/src/changed.h": b"/* new */\n"})
        wrapper_before = (target / "bin" / "hostbench-runner").read_text()
        third = _sh(["--server", server.url, "--dir", str(target), "--no-service"], {**env, "CC": "false"})
        text = third.stdout + third.stderr
        assert third.returncode == 1 and "building the kernels failed" in text, text
        assert "false -std=c11" in text and "reused" not in text, text  # make ran the compiler: no reuse
        assert (target / "bin" / "hostbench-runner").read_text() == wrapper_before
        assert (target / "lib" / "hostbench_runner" / "_bin" / "hbk").is_file()
    finally:
        if (target / "runner.pid").exists():
            pid = int((target / "runner.pid").read_text())
            if pids_alive([pid]):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("args, message", [
    ([], "--server URL is required"),
    (["--server", "ftp://x"], "must be an http(s) URL"),
    (["--server", "http://127.0.0.1:9", "--bogus"], "unknown option '--bogus'"),
    (["--server", "http://127.0.0.1:9", "--label", "novalue"], "--label wants key=value"),
    (["--server", "http://127.0.0.1:9", "--disk-target", "scratch=relative/path"], "--disk-target wants NAME=/absolute"),
    (["--server", "http://127.0.0.1:9"], "no --token"),
    (["--server", "http://127.0.0.1:9", "--token", "t"], "cannot download http://127.0.0.1:9/api/install/"),
])
def test_errors_are_one_clear_line(tmp_path, args, message):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    out = _sh([*args, "--dir", str(tmp_path / "d")] if args else args, env, timeout=60)
    assert out.returncode != 0
    errors = [line for line in out.stderr.splitlines() if line.startswith("hostbench-install: error: ")]
    assert len(errors) == 1 and message in errors[0], out.stderr


def test_a_python_older_than_3_9_is_refused(tmp_path):
    old = tmp_path / "python3"
    old.write_text("#!/bin/sh\ncase \"$*\" in *platform*) echo 3.8.10 ;; *) exit 1 ;; esac\n")
    old.chmod(0o755)
    out = _sh(["--server", "http://127.0.0.1:9", "--token", "t", "--dir", str(tmp_path / "d")],
              {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHON": str(old)}, timeout=60)
    assert out.returncode == 1 and "is Python 3.8.10; the runner needs 3.9 or later" in out.stderr, out.stderr


def test_systemd_unit_installed_enabled_restarted_and_upgraded(server, tmp_path):
    """With systemd running (here: a stand-in systemctl that logs its calls) and as root, the installer writes
    the unit, enables and restarts it; run again, it stops the active service before replacing the files."""
    if os.geteuid() != 0:
        pytest.skip("the systemd path is taken as root only")
    server.files["/api/install/hostbench-runner.tar.gz"] = _tarball()
    fake = tmp_path / "fakebin"
    fake.mkdir()
    calls = tmp_path / "systemctl.log"
    (fake / "systemctl").write_text(f"""#!/bin/sh
echo "$*" >>{calls}
case "$1" in
    is-active) [ -f {tmp_path}/active ] ;;
    restart|start) touch {tmp_path}/active ;;
    stop) rm -f {tmp_path}/active ;;
esac
""")
    (fake / "systemctl").chmod(0o755)
    (tmp_path / "run-systemd").mkdir()
    units = tmp_path / "units"
    units.mkdir()
    env = {"PATH": f"{fake}:{os.environ['PATH']}", "HOME": str(tmp_path),
           "HOSTBENCH_INSTALL_SYSTEMD_RUN": str(tmp_path / "run-systemd"), "HOSTBENCH_INSTALL_UNIT_DIR": str(units)}
    target = tmp_path / "opt"
    out = _sh(["--server", server.url, "--token", FakeServer.registration_token, "--dir", str(target)], env)
    assert out.returncode == 0, out.stdout + out.stderr
    unit = (units / "hostbench-runner.service").read_text()
    assert f"ExecStart={target}/bin/hostbench-runner\n" in unit
    assert "RestartPreventExitStatus=2 3" in unit and "KillMode=mixed" in unit and "WantedBy=multi-user.target" in unit
    assert calls.read_text().splitlines() == ["daemon-reload", "enable hostbench-runner.service",
                                              "restart hostbench-runner.service"]
    assert f"systemd: wrote {units}/hostbench-runner.service, enabled it and (re)started it" in out.stdout
    if shutil.which("systemd-analyze"):
        check = subprocess.run(["systemd-analyze", "verify", str(units / "hostbench-runner.service")],
                               capture_output=True, text=True)
        assert "hostbench-runner.service:" not in check.stderr, check.stderr

    calls.write_text("")
    again = _sh(["--server", server.url, "--dir", str(target)], env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert calls.read_text().splitlines() == ["is-active --quiet hostbench-runner.service",
                                              "stop hostbench-runner.service", "daemon-reload",
                                              "enable hostbench-runner.service", "restart hostbench-runner.service"]
    assert len(server.registrations) == 1 and "registration skipped" in again.stdout
