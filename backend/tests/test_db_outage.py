"""A real API process whose PostgreSQL cannot be reached (a port nobody listens on, as during a restart): every
route that needs the database answers 503 with Retry-After at once, never a 500 and never a hang; health says
which part is down. The chaos command proves the same with a real PostgreSQL stopped under a running job."""
import os
import time

import httpx
import pytest
from sqlalchemy.engine import make_url

from tests.apiproc import api_process, free_port


@pytest.fixture(scope="module")
def api_without_database(tmp_path_factory):
    """One API process for the module's tests (it holds no state they could share: it has no database)."""
    dead = free_port()  # bound and released: nothing listens there
    url = make_url(os.environ["DATABASE_URL"]).set(host="127.0.0.1", port=dead)
    env = dict(os.environ, DATABASE_URL=url.render_as_string(hide_password=False), PYTHONUNBUFFERED="1")
    with api_process(tmp_path_factory.mktemp("db-outage") / "api.log", env) as base:
        yield base


@pytest.mark.parametrize(("method", "path", "body"), [
    ("GET", "/api/hosts", None),
    ("GET", "/api/runs", None),
    ("POST", "/api/runner/heartbeat", {"run": None, "version": "t"}),
    ("GET", "/api/runner/work?wait_s=0", None),
    ("POST", "/api/runner/runs/1/samples", {"attempt": 1, "samples": [
        {"seq": 0, "t": 0.5, "interval_s": 1.0, "threads": 1, "repeat": 0, "warmup": False, "value": 1.0,
         "unit": "GFLOP/s"}]}),
    ("POST", "/api/runner/runs/1/lease", {"attempt": 1}),
    ("POST", "/api/auth/login", {"name": "admin", "password": "x" * 12}),
])
def test_every_database_route_answers_503_with_retry_after(api_without_database, method, path, body):
    t0 = time.monotonic()
    token = ("hbrun_" if "/runner" in path else "hbpat_") + "x" * 40
    r = httpx.request(method, api_without_database + path, json=body, timeout=10,
                      headers={"Authorization": f"Bearer {token}", "Origin": api_without_database})
    took = time.monotonic() - t0
    assert r.status_code == 503, (r.status_code, r.text)
    assert int(r.headers["Retry-After"]) >= 1
    assert "database" in r.json()["detail"]
    assert took < 5, f"{method} {path} took {took:.1f} s"


def test_health_says_the_database_is_down(api_without_database):
    r = httpx.get(api_without_database + "/api/health", timeout=10)
    assert r.status_code == 200
    h = r.json()
    assert h["status"] == "degraded" and h["database"].startswith("error") and h["broker"] == "ok", h


def test_a_worker_task_skips_its_turn_with_one_line_while_the_database_is_down():
    """A periodic task that finds PostgreSQL down logs one warning per period, not a traceback (the chaos run
    with PostgreSQL stopped for 20 s wrote 5 MB of tracebacks into the worker's log), and returns None."""
    import subprocess
    import sys

    dead = free_port()
    url = make_url(os.environ["DATABASE_URL"]).set(host="127.0.0.1", port=dead)
    env = dict(os.environ, DATABASE_URL=url.render_as_string(hide_password=False))
    code = ("import logging; logging.basicConfig(level=logging.INFO)\n"
            "from app.worker.tasks import fire_schedules, prune_samples, reconcile\n"
            "print('RESULT', reconcile(), prune_samples(), fire_schedules())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60,
                         cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.returncode == 0, out.stderr
    assert "RESULT None None None" in out.stdout
    assert "Traceback" not in out.stderr, out.stderr
    skipped = [line for line in out.stderr.splitlines() if "skipped: the database is unavailable" in line]
    assert [line.split(":")[2].split()[0] for line in skipped] == ["reconcile", "prune_samples", "fire_schedules"], \
        out.stderr
