"""./hostbench up's supervisor (Stack.supervise_once) with real child processes: a crashed child is restarted, a
runner whose credential was revoked (exit 3) or whose configuration is wrong (exit 2) is not: another start would
fail the same way, and a revoked runner restarted in a loop is what the issue's live probe saw."""
import sys
import time

from hostbench_stack.stack import Stack


def _wait_exit(stack: Stack, *names: str) -> None:
    deadline = time.monotonic() + 20
    while any(stack.children[n].alive() for n in names):
        assert time.monotonic() < deadline, "the children did not exit"
        time.sleep(0.05)


def test_a_revoked_runner_is_not_restarted_a_crashed_worker_is(tmp_path):
    stack = Stack(tmp_path, with_runner=False, database_url="postgresql://unused", redis_url="redis://unused")
    exit_with = lambda rc: [sys.executable, "-c", f"import sys; sys.exit({rc})"]  # noqa: E731
    stack._child("runner", exit_with(3), tmp_path)
    stack._child("runner-b", exit_with(2), tmp_path)
    stack._child("worker", exit_with(1), tmp_path)
    _wait_exit(stack, "runner", "runner-b", "worker")
    lines = stack.supervise_once()
    assert any(line.startswith("runner exited 3 (its credential was revoked); not restarted") for line in lines), lines
    assert any(line.startswith("runner-b exited 2 (its configuration is wrong); not restarted") for line in lines)
    assert any(line.startswith("worker had stopped; restarted it") for line in lines)
    assert len(stack.children["worker"].restarts) == 1
    _wait_exit(stack, "worker")
    again = stack.supervise_once()  # the runners stay given up (said once); the worker is restarted again
    assert not any(line.startswith("runner") for line in again), again
    assert any(line.startswith("worker had stopped") for line in again)
    assert stack.children["runner"].restarts == [] and stack.given_up == {"runner", "runner-b"}


def test_a_stack_without_beat_is_ready_without_the_schedulers_mark(tmp_path):
    """A test's bare API (no Celery beat) never gets beat's mark; health calls the scheduler late three reconcile
    periods after the API started, and on a busy machine the first answer can come later (a CI run failed so).
    A stack that runs beat still waits for all of it."""
    stack = Stack(tmp_path, with_runner=False, database_url="postgresql://unused", redis_url="redis://unused")
    late = {"status": "degraded", "database": "ok", "broker": "ok", "reconciler": "ok",
            "scheduler": "late: Celery beat's reconcile task has not run since this API process started"}
    assert stack._ready(late)
    assert not stack._ready({**late, "reconciler": "late: the reconciler last ran 30 s ago"})
    assert not stack._ready({**late, "database": "not answering within 2 s"})
    stack._child("beat", [sys.executable, "-c", "pass"], tmp_path)
    assert not stack._ready(late)
    assert stack._ready({**late, "status": "ok", "scheduler": "ok"})
    _wait_exit(stack, "beat")
