"""`hostbench-runner --once` as a real process (issue 30: Slurm job steps and Kubernetes Jobs): it runs the work
handed to it, uploads, and exits 0 once no more work comes; without a state directory it keeps nothing; its
settings are checked. (Against a real server: backend/tests/test_fleet_once.py and `./hostbench slurm lab`.)"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from runner_fakes import FakeServer, assignment

from hostbench_runner import config
from hostbench_runner.errors import ConfigError


def test_once_runs_its_work_uploads_and_leaves(server, tmp_path, fake_kernel):
    kbin = fake_kernel("ok")
    server.work.put(assignment(run_id=61))
    server.work.put(assignment(run_id=62))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOSTBENCH_")}
    env.update(HOSTBENCH_SERVER=server.url, HOSTBENCH_KERNEL_BIN=str(kbin), HOSTBENCH_FMA_PROBE="0",
               HOSTBENCH_REGISTRATION_TOKEN=FakeServer.registration_token, SLURMD_NODENAME="cn07",
               TMPDIR=str(tmp_path))
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "hostbench_runner", "--once", "--once-idle", "2"], env=env,
                       capture_output=True, text=True, timeout=120)
    took = time.monotonic() - t0
    assert r.returncode == 0, r.stderr[-3000:]
    assert sorted(run_id for run_id, _ in server.finishes) == ["61", "62"]
    assert all(body["status"] == "succeeded" for _, body in server.finishes)
    assert "one-shot: 2 run(s) done" in r.stderr and took < 60
    reg = server.registrations[0]
    assert reg["name"] == "cn07" and reg["labels"] == {"slurm_node": "cn07"}
    assert list(tmp_path.glob("hostbench-runner-once-*")) == []  # its temporary state went with it
    assert not (tmp_path / "state").exists()


def test_once_settings():
    s = config.load(["--server", "http://h:1", "--once", "--once-idle", "4"], {"SLURMD_NODENAME": "n1"})
    assert s.once and s.once_idle_s == 4 and s.poll_wait_s == 2 and s.name == "n1" and s.labels["slurm_node"] == "n1"
    s = config.load(["--server", "http://h:1"], {"HOSTBENCH_ONCE": "1", "HOSTBENCH_ONCE_WAIT": "30"})
    assert s.once and s.once_wait_s == 30
    s = config.load(["--server", "http://h:1", "--name", "mine"], {"HOSTBENCH_NODE_NAME": "k8s-a"})
    assert not s.once and s.name == "mine" and s.labels["k8s_node"] == "k8s-a" and s.poll_wait_s == 20
    with pytest.raises(ConfigError, match="once_wait"):
        config.load(["--server", "http://h:1", "--once-wait", "0"], {})
    with pytest.raises(ConfigError, match="not a number"):
        config.load(["--server", "http://h:1"], {"HOSTBENCH_ONCE_IDLE": "soon"})
