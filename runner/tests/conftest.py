"""Pytest fixtures of the runner tests; the fakes themselves live in runner_fakes.py."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from runner_fakes import DESCRIBE, FAKE_KERNEL, FakeServer

from hostbench_runner.config import Settings


@pytest.fixture(scope="session")
def real_hbk() -> Path:
    """The real kernel binary. `./hostbench test` builds it before the runner suite, so a missing binary
    is a failure, never a silent skip."""
    path = Path(__file__).resolve().parents[1] / "kernels" / "build" / "hbk"
    if not path.exists():
        pytest.fail(f"kernel not built ({path}): run `make -C runner/kernels` (./hostbench test does)")
    return path


@pytest.fixture(scope="session")
def net_schema(real_hbk: Path) -> dict[str, Any]:
    """The real `hbk net --describe` parameter schema."""
    out = subprocess.run([str(real_hbk), "net", "--describe"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["parameters"]


@pytest.fixture
def cpu_schema() -> dict[str, Any]:
    return json.loads(json.dumps(DESCRIBE["parameters"]))


@pytest.fixture
def fake_kernel(tmp_path: Path):
    """make(mode) -> path of an executable fake `hbk`; its invocations are logged to <path>.log."""

    def make(mode: str) -> Path:
        path = tmp_path / f"hbk-{mode}"
        log = tmp_path / f"hbk-{mode}.log"
        body = FAKE_KERNEL.format(mode=mode, describe=json.dumps(DESCRIBE), log=str(log))
        path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return path

    return make


@pytest.fixture
def server():
    srv = FakeServer()
    srv.thread.start()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


@pytest.fixture
def settings_for(tmp_path: Path):
    """settings_for(server_url, kernel_bin) -> Settings with short timings for tests."""

    def make(url: str, kernel_bin: Path | None = None, **overrides: Any) -> Settings:
        s = Settings(
            server=url,
            registration_token=FakeServer.registration_token,
            state_dir=tmp_path / "state",
            kernel_bin=kernel_bin or tmp_path / "missing-hbk",
            name="test-runner",
            labels={"provider": "test"},
            heartbeat_s=0.2,
            poll_wait_s=1,
            lease_renew_s=0.2,
            lease_lost_after_s=1.0,
            kill_grace_s=0.5,
            upload_interval_s=0.05,
            backoff_base_s=0.02,
            backoff_cap_s=0.2,
            http_timeout_s=2.0,
            shutdown_timeout_s=5.0,
            backlog_wait_s=3.0,
            describe_timeout_s=5.0,
            fma_probe=False,  # test_fma_probe_cache.py runs it; the fake kernels here would not answer it
        )
        for k, v in overrides.items():
            setattr(s, k, v)
        return s

    return make
