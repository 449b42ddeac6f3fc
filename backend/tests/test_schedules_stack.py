"""Schedules on the real stack: API (uvicorn), Celery worker and beat (firing every second here), a runner and its
kernels, real PostgreSQL and Redis. A due schedule fires through beat and its suite run really runs on the host;
fired again while that run is on, it is skipped with the host named busy."""
import os
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import psycopg
import pytest
from hostbench_stack.stack import Stack

from tests.conftest import fresh_db, wait_until

AUTH: dict[str, str] = {}
SHORT = {"title": "short disk", "items": [{"experiment": "disk", "params": {
    "ops": ["seq_read"], "blocks": [1048576], "file_size": 16777216, "threads": [1], "repeats": 2,
    "duration_s": 2, "warmup_s": 0}}]}


@pytest.fixture(scope="module")
def stack():
    state = Path(tempfile.mkdtemp(prefix="hb-schedules-", dir=os.environ.get("HOSTBENCH_TEST_STATE")))
    s = Stack(state, database_url=fresh_db("hostbench_schedules_it"), redis_url=os.environ["REDIS_URL"],
              runner_name="sched-host", extra_env={"SCHEDULES_FIRE_S": "1"})
    s.start()
    AUTH.update(s.admin_headers())
    yield s
    s.stop()


def _make_due(stack, schedule_id: int) -> None:
    dsn = stack.database_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("update schedules set next_fire_at = %s where id = %s",
                     (datetime.now(UTC) - timedelta(seconds=1), schedule_id))


def test_beat_fires_a_due_schedule_its_suite_runs_and_a_busy_host_is_skipped(stack):
    c = httpx.Client(base_url=stack.url, headers=AUTH, timeout=10)
    host_id = c.get("/api/hosts").json()["data"][0]["id"]
    suite = c.post("/api/suites", json=SHORT)
    assert suite.status_code == 201, suite.text
    r = c.post("/api/schedules", json={"title": "every 5 min", "suite": suite.json()["id"], "interval_s": 300,
                                       "host_ids": [host_id]})
    assert r.status_code == 201, r.text
    sid = r.json()["id"]

    def history():
        return c.get(f"/api/schedules/{sid}/history").json()["data"]

    _make_due(stack, sid)
    [first] = wait_until(lambda: history() or None, 30, "beat to fire the schedule")
    assert first["outcome"] == "started" and first["trigger"] == "beat" and first["host_ids"] == [host_id], first
    sr_id = first["suite_run_id"]
    # fired again while its run is on: the host is busy
    _make_due(stack, sid)
    second = wait_until(lambda: (h := history()) and len(h) > 1 and h[0], 30, "the second firing")
    assert second["outcome"] == "skipped" and second["skipped"][0]["reason"].startswith("busy"), second
    sr = wait_until(lambda: (x := c.get(f"/api/suite-runs/{sr_id}").json())["status"] != "running" and x, 120,
               "the scheduled suite run to finish")
    assert sr["status"] in ("succeeded", "failed") and sr["runs_total"] == 1, sr
    run = c.get(f"/api/runs/{sr['runs'][0]['id']}").json()
    assert run["status"] in ("succeeded", "untrusted"), run["status_reason"]
    listed = c.get("/api/schedules").json()["data"][0]
    assert listed["last_firing"]["outcome"] == "skipped"
    assert datetime.fromisoformat(listed["next_fire_at"]) > datetime.now(UTC)
