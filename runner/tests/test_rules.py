"""The kernels' cross-field rules ("x-rules" of --describe) at the runner: the parameters it would pass are
refused before any kernel starts, with the kernel's own message, word for word (less the conditions on what the run
kind pins: its role)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hostbench_common.experiments import RUNS
from hostbench_common.schema import rule_violation, validate

from hostbench_runner.errors import ParamError

NET = {"op": "udp_stream", "sizes": [1024], "streams": [1], "repeats": 1, "duration_s": 1, "warmup_s": 0}


def _kernel_message(hbk: Path, argv: list[str]) -> tuple[int, str]:
    p = subprocess.run([str(hbk), *argv[1:2], "--check", *argv[2:]], capture_output=True, text=True, timeout=30)
    last = json.loads(p.stdout.splitlines()[-1])
    return p.returncode, last.get("message", "")


def _without_rules(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != "x-rules"}


@pytest.mark.parametrize("change", [
    {"sizes": [1, 65508]},
    {"op": "udp_rr", "sizes": [70000]},
    {"op": "tcp_stream", "poll": "busy"},
    {"op": "udp_stream", "poll": "busy"},
    {"op": "tcp_rr", "repeats": 5, "stable_cv": 0.1, "max_repeats": 4},
])
def test_the_runner_refuses_what_the_kernel_refuses_in_its_words(real_hbk, net_schema, change):
    exp = RUNS["network"]
    params = {**NET, **change}
    with pytest.raises(ParamError) as refused:
        exp.kernel_params(params, net_schema)
    rc, message = _kernel_message(real_hbk, exp.argv(real_hbk, exp.kernel_params(params, _without_rules(net_schema))))
    # the kernel, told --role, names it too; the runner's words (a run's status_reason) leave out what the run
    # kind pins (issue 32: "role is loopback" is no condition a person set)
    assert rc == 2 and str(refused.value) == re.sub(r" and role is \w+", "", message)


@pytest.mark.parametrize("change", [
    {"sizes": [1, 65507]},
    {"op": "udp_rr", "sizes": [65507], "poll": "busy"},
    {"op": "tcp_stream", "sizes": [65508]},
    {"op": "tcp_rr", "poll": "busy"},
    {"op": "tcp_rr", "repeats": 5, "stable_cv": 0.1, "max_repeats": 5},
    {"repeats": 5, "stable_cv": 0, "max_repeats": 1},  # max_repeats caps only repeat-until-stable
])
def test_what_the_rules_allow_passes_and_the_kernel_takes_it(real_hbk, net_schema, change):
    exp = RUNS["network"]
    argv = exp.argv(real_hbk, exp.kernel_params({**NET, **change}, net_schema))
    assert _kernel_message(real_hbk, argv) == (0, "")


def test_the_serving_side_takes_any_size(net_schema):
    """The serving kernel gets op alone: the default sizes (65536) do not concern it, even for UDP."""
    RUNS["network_serve"].kernel_params({"op": "udp_stream"}, net_schema, deadline_s=60)


def test_absent_parameters_count_at_their_defaults(cpu_schema):
    rules = cpu_schema["x-rules"]
    assert any(r["param"] == "max_repeats" for r in rules)
    props = cpu_schema["properties"]
    # repeats 20 > the default max_repeats 10, once stable_cv > 0
    found = next(filter(None, (rule_violation(r, {"repeats": 20, "stable_cv": 0.1}, props) for r in rules)))
    assert found == ("max_repeats", 10, "max_repeats: 10 is below repeats 20 when stable_cv > 0; repeat-until-stable "
                                    "runs at least `repeats` phases")
    validate({"repeats": 20}, cpu_schema)  # stable_cv 0 (default): no cap


@pytest.mark.parametrize("rule", [
    {"param": "repeats", "maximum": 3, "minimum": 1, "reason": "two constraints"},
    {"param": "repeats", "reason": "no constraint"},
    {"param": "repeats", "maximum": 3, "unless": {}, "reason": "an unknown key"},
    {"param": "repeats", "maximum": 3, "when": {"stable_cv": {"minimum": 0}}, "reason": "an unknown condition"},
    {"param": "nope", "maximum": 3, "reason": "an unknown parameter"},
])
def test_a_rule_the_runner_does_not_know_is_refused_not_ignored(cpu_schema, rule):
    schema = {**cpu_schema, "x-rules": [rule]}
    with pytest.raises(ParamError, match="x-rules"):
        validate({"repeats": 5}, schema)


def test_each_kind_of_rule():
    props = {"mode": {"default": "a"}, "size": {"default": [1]}, "file": {"default": 4096},
             "on": {"default": False}, "cv": {"default": 0}}
    cases = [
        ({"param": "size", "maximum": 10, "when": {"mode": {"enum": ["b"]}}, "reason": "r"},
         {"mode": "b", "size": [1, 11]}, "size: 11 is larger than 10 when mode is b; r"),
        ({"param": "mode", "enum": ["a"], "when": {"on": {"enum": [True]}}, "reason": "r"},
         {"mode": "b", "on": True}, "mode: b is not one of a when on is true; r"),
        ({"param": "file", "multipleOf": 4096, "reason": "r"}, {"file": 5000},
         "file: 5000 is not a multiple of 4096; r"),
        ({"param": "size", "maximumParam": "file", "reason": "r"}, {"size": [8192]},
         "size: 8192 is larger than file 4096; r"),
        ({"param": "file", "minimumParam": "cv", "when": {"cv": {"exclusiveMinimum": 0.5}}, "reason": "r"},
         {"file": 1, "cv": 1.5}, "file: 1 is below cv 1.5 when cv > 0.5; r"),
    ]
    for rule, value, message in cases:
        found = rule_violation(rule, value, props)
        assert found is not None and (found[0], found[2]) == (rule["param"], message)
    assert rule_violation(cases[0][0], {"mode": "a", "size": [11]}, props) is None  # the condition does not hold
    assert rule_violation(cases[1][0], {"mode": "b", "on": 1}, props) is None  # 1 is not true


def test_strong_scaling_work_reaches_the_kernel_within_its_bounds_and_rules(real_hbk):
    """cpu's `work` (fixed work per repeat, strong scaling): 0 stays off the argv (fixed duration); a positive value
    is passed as --work; out of bounds, or fewer units than threads, is refused by the runner with the kernel's own
    words, and the kernel refuses the same."""
    schema = json.loads(subprocess.run([str(real_hbk), "cpu", "--describe"], capture_output=True, text=True,
                                       check=True).stdout)["parameters"]
    run = RUNS["cpu"]
    base = {"op": "fp64", "threads": [1, 2, 4], "repeats": 1, "duration_s": 5, "warmup_s": 0}
    assert "--work" not in run.argv(real_hbk, run.kernel_params({**base, "work": 0}, schema))
    argv = run.argv(real_hbk, run.kernel_params({**base, "work": 10**9}, schema))
    assert argv[argv.index("--work") + 1] == "1000000000"
    assert _kernel_message(real_hbk, argv) == (0, "")
    for bad, words in (({"work": -1}, "work: -1 is below the minimum 0"),
                       ({"work": 10**15 + 1}, "is above the maximum 1000000000000000"),
                       ({"work": 2.5}, "work: expected integer")):
        with pytest.raises(ParamError, match=words):
            run.kernel_params({**base, **bad}, schema)
    with pytest.raises(ParamError) as refused:
        run.kernel_params({**base, "work": 3}, schema)
    rc, message = _kernel_message(real_hbk, run.argv(real_hbk, run.kernel_params({**base, "work": 3},
                                                                                _without_rules(schema))))
    assert rc == 2 and str(refused.value) == message
    assert "threads: 4 is larger than work 3" in message
