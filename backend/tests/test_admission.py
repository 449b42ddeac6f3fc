"""Admission classes (app.core.admission): which class each route belongs to, and that no class admits more
requests than its connection pool can serve, so an admitted request never waits for a connection. The behaviour
under a stampede is measured by `./hostbench load --burst` (the fleet suite runs a small one)."""
import pytest

from app.core.admission import GATES, THREADS, gate_of
from app.core.db import POOL_SIZE, RUNNER_POOL_SIZE
from app.main import app


@pytest.mark.parametrize(("path", "gate"), [
    ("/api/runner/runs/7/lease", "run"),
    ("/api/runner/runs/7/start", "run"),
    ("/api/runner/runs/7/finish", "run"),
    ("/api/runner/runs/7/listening", "run"),
    ("/api/runner/runs/7/samples", "runner"),
    ("/api/runner/heartbeat", "runner"),
    ("/api/runner/credential/rotate", "runner"),
    ("/api/runners/register", "runner"),
    ("/api/runner/work", None),  # the long poll admits its database steps itself ("poll")
    ("/api/hosts/1", "dashboard"),
    ("/api/runs/1/stream", "dashboard"),
    ("/api/health", "dashboard"),
    ("/assets/index.js", None),
])
def test_each_route_is_in_its_class(path, gate):
    assert gate_of(path) == gate


def test_every_runner_route_is_a_runner_class():
    """A new runner route lands in a runner class by its prefix, never in the dashboard's."""
    paths = [p for p in app.openapi()["paths"] if p.startswith(("/api/runner", "/api/runners"))]
    assert len(paths) >= 8
    for p in paths:
        assert gate_of(p.replace("{run_id}", "1")) in ("run", "runner", None), p


def test_no_class_admits_more_than_its_pool_holds():
    pool_cap = lambda size: size + size // 2  # noqa: E731 - pool_size plus max_overflow (app.core.db._engine)
    runner_side = GATES["run"].slots + GATES["runner"].slots + GATES["poll"].slots
    assert runner_side <= pool_cap(RUNNER_POOL_SIZE), (runner_side, RUNNER_POOL_SIZE)
    assert GATES["dashboard"].slots <= pool_cap(POOL_SIZE)
    assert THREADS > sum(g.slots for g in GATES.values())
    # every wait is well inside the runner's 10-s request timeout and 30-s lease
    assert all(g.wait_s <= 8 for g in GATES.values())
