"""`./hostbench run SUITE --wait` (issue 32): one progress line a run (rewritten in place on a terminal, not one per
poll in a log), then the results table: each run's figure, verdict, duration and end time."""
import io
import itertools

from hostbench_cli import remote


def _suite(done: int, status: str = "running") -> dict:
    runs = [
        {"id": 11, "host_id": 3, "experiment": "cpu", "op": "fp64", "status": "succeeded" if done > 0 else "running",
         "started_at": "2026-11-29T03:00:00Z", "finished_at": "2026-11-29T03:01:05.123456Z" if done > 0 else None,
         "headline": "best 47.7 GFLOP/s" if done > 0 else None, "verdict": "valid" if done > 0 else None},
        {"id": 12, "host_id": 3, "experiment": "memory", "op": "copy", "status": "succeeded" if done > 1 else "queued",
         "started_at": None, "finished_at": None, "headline": None, "verdict": None},
    ]
    return {"id": 5, "title": "Quick health check", "runs_done": done, "runs_total": 2, "progress": done / 2,
            "expected_duration_s": 120.0, "status": status, "runs": runs}


class _Server:
    """The answers GET /api/suite-runs/5 gives in turn (the poll itself is what is under test)."""

    def __init__(self, answers: list[dict]):
        self.answers = iter(answers)

    def get_json(self, path: str, what: str) -> dict:
        return next(self.answers)


def test_a_log_gets_a_line_per_run_not_per_poll(monkeypatch):
    clock = itertools.count(0, 5)  # every poll 5 s later: the elapsed time changes each time
    monkeypatch.setattr(remote.time, "monotonic", lambda: float(next(clock)))
    out = io.StringIO()
    polls = [_suite(0)] * 6 + [_suite(1)] * 6 + [_suite(2, "succeeded")]
    end = remote.follow_suite(_Server(polls), 5, out=out, poll_s=0)
    lines = out.getvalue().splitlines()
    assert end["status"] == "succeeded"
    assert len(lines) == 3, lines  # run 11 going, run 11 done, the end
    assert lines[0].startswith("suite run 5 (Quick health check): 0 of 2 runs done") and "now run 11" in lines[0]
    assert lines[-1].startswith("suite run 5 (Quick health check): 2 of 2 runs done (100%)")


def test_the_table_has_each_runs_figure_verdict_duration_and_end():
    table = remote.suite_table(_suite(1), {3: "lab-1"}).splitlines()
    assert table[0].split() == ["RUN", "HOST", "EXPERIMENT", "OP", "STATUS", "VERDICT", "HEADLINE", "TOOK", "ENDED"]
    assert table[1].split() == ["11", "lab-1", "cpu", "fp64", "succeeded", "valid", "best", "47.7", "GFLOP/s", "1",
                                "min", "5", "s", "2026-11-29", "03:01:05"]
    assert table[2].split() == ["12", "lab-1", "memory", "copy", "queued", "—", "—", "—", "—"]
