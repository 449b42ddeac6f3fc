"""./hostbench chaos's report: one row per scenario, then exactly one JSON line; any loss fails it."""
import json

from hostbench_harness.chaos import SCENARIOS, Tally, _report


def test_report_ends_with_one_json_line_and_fails_on_any_loss(capsys):
    clean = Tally(trials=3, resolve_s=[1.0, 2.0, 4.0])
    dead = Tally(trials=2, dead_claims=1, resolve_s=[10.0], notes=["run 4 was claimed while its runner was dead"])
    assert _report({"runner-kill": clean}, seed=5, took_s=12) is True
    assert _report({"runner-kill": clean, "idle-runner-kill": dead}, seed=5, took_s=12) is False
    out = capsys.readouterr().out.strip().splitlines()
    line = json.loads(out[-1])
    assert line["ok"] is False and line["seed"] == 5
    assert line["chaos"]["runner-kill"] == {"ok": True, "trials": 3, "lost": 0, "duplicated": 0, "stuck": 0, "kernels_left": 0,
                                            "dead_claims": 0, "bad_answers": 0, "resolve_p50_s": 2.0,
                                            "resolve_max_s": 4.0}
    assert line["chaos"]["idle-runner-kill"]["dead_claims"] == 1 and line["chaos"]["idle-runner-kill"]["ok"] is False
    assert line["chaos"]["idle-runner-kill"]["notes"] == ["run 4 was claimed while its runner was dead"]
    assert any("claimed while its runner was dead" in row for row in out)
    assert sum(1 for row in out if row.startswith("{")) == 2  # one per report printed above


def test_every_tally_column_fails_the_trial():
    for column in ("lost", "duplicated", "stuck", "kernels_left", "dead_claims", "bad_answers"):
        assert not Tally(trials=1, **{column: 1}).ok
    assert Tally(trials=1).ok
    assert set(SCENARIOS) == {"runner-kill", "idle-runner-kill", "runner-stop", "worker-kill", "beat-kill",
                              "redis-kill", "postgres-stop", "redis-stop", "postgres-hang", "beat-stop", "api-kill",
                              "partition", "spool-full"}
