"""The summary of `./hostbench test` says why a suite failed (a CI page may show only the end of the log)."""
import json

from hostbench_stack.testing import why_failed


def test_a_failed_chaos_run_names_its_scenario_and_the_count_that_failed_it():
    line = {"chaos": {"runner-kill": {"ok": True, "trials": 1, "lost": 0},
                      "redis-kill": {"ok": False, "trials": 1, "lost": 0, "stuck": 1, "resolve_p50_s": 5.3}},
            "seed": 1, "ok": False}
    assert why_failed("scenario table\n" + json.dumps(line) + "\n") == "redis-kill stuck 1"
    line["chaos"]["redis-kill"]["notes"] = ["run 4 not terminal 60 s after Redis came back"]
    assert why_failed(json.dumps(line)) == "redis-kill stuck 1 (run 4 not terminal 60 s after Redis came back)"


def test_a_failed_pytest_run_names_its_failed_tests():
    text = "..F.\nFAILED tests/test_a.py::test_b - AssertionError\n1 failed, 3 passed in 2.0s\n"
    assert why_failed(text) == "FAILED tests/test_a.py::test_b - AssertionError"


def test_a_load_run_that_lost_runs_says_how_many():
    assert why_failed(json.dumps({"runs_lost": 2, "server_errors": 0})) == "runs_lost=2"
