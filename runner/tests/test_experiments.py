import pytest
from hostbench_common.experiments import RUNS, format_arg, kernels_needed

from hostbench_runner.errors import ParamError


def test_cpu_argv(cpu_schema):
    exp = RUNS["cpu"]
    params = exp.kernel_params(
        {"op": "fp32", "threads": [1, 2, 4, 8], "repeats": 3, "duration_s": 5, "warmup_s": 1}, cpu_schema
    )
    assert exp.argv("/opt/hbk", params) == [
        "/opt/hbk", "cpu", "--op", "fp32", "--isa", "auto", "--threads", "1,2,4,8", "--repeats", "3",
        "--duration_s", "5", "--warmup_s", "1",
    ]


def test_cpu_argv_fills_kernel_defaults(cpu_schema):
    exp = RUNS["cpu"]
    argv = exp.argv("hbk", exp.kernel_params({"op": "int32"}, cpu_schema))
    assert argv == ["hbk", "cpu", "--op", "int32", "--isa", "auto", "--threads", "1,2,4,8", "--repeats", "3",
                    "--duration_s", "5", "--warmup_s", "1"]


def test_cpu_trace_argv(cpu_schema):
    exp = RUNS["cpu_trace"]
    params = exp.kernel_params({"op": "fp64", "threads": 2, "duration_s": 600}, cpu_schema)
    assert exp.argv("hbk", params) == [
        "hbk", "cpu", "--op", "fp64", "--isa", "auto", "--threads", "2", "--repeats", "1",
        "--duration_s", "600", "--warmup_s", "0",
    ]


def test_cpu_trace_default_duration_is_600(cpu_schema):
    exp = RUNS["cpu_trace"]
    assert exp.kernel_params({"op": "fp64", "threads": 4}, cpu_schema)["duration_s"] == 600


def test_fractional_durations_pass_through(cpu_schema):
    exp = RUNS["cpu"]
    argv = exp.argv("hbk", exp.kernel_params({"op": "fp64", "duration_s": 0.5, "warmup_s": 0.25}, cpu_schema))
    assert argv[-4:] == ["--duration_s", "0.5", "--warmup_s", "0.25"]


@pytest.mark.parametrize(
    "params, message",
    [
        ({"op": "fp64", "threads": [1, 2]}, "threads: expected integer"),  # trace takes one count
        ({"op": "fp64", "threads": 2, "repeats": 3}, "repeats: unknown parameter"),  # pinned by the experiment
        ({"op": "fp64", "threads": 2, "warmup_s": 1}, "warmup_s: unknown parameter"),
        ({"op": "fp64", "threads": 0}, "below the minimum"),
        ({"op": "fp64", "threads": "4; rm -rf /"}, "expected integer"),
        ({"op": "fp64", "threads": 2, "duration_s": 86401}, "above the maximum 86400"),
        ("op=fp64", "params: expected object"),
    ],
)
def test_cpu_trace_refuses_bad_params(cpu_schema, params, message):
    with pytest.raises(ParamError, match=message):
        RUNS["cpu_trace"].kernel_params(params, cpu_schema)


def test_kernel_without_expected_parameter_is_reported(cpu_schema):
    del cpu_schema["properties"]["warmup_s"]
    with pytest.raises(ParamError, match="has no parameter 'warmup_s'"):
        RUNS["cpu"].kernel_params({"op": "fp64"}, cpu_schema)


def test_format_arg_refuses_option_lookalikes_and_separators():
    for bad in ("--op", "-x", "a,b", "x y", "a;b", "", "$(id)", "a\nb", "ab\n"):
        with pytest.raises(ParamError):
            format_arg("op", bad)
    assert format_arg("op", "seq-read") == "seq-read"
    assert format_arg("x", True) == "true"
    assert format_arg("x", [1, 2]) == "1,2"
    assert format_arg("x", 2.0) == "2"


def test_every_experiment_names_a_kernel():
    assert kernels_needed() == ["cpu", "disk", "gpu", "memory", "net"]
    for kind, exp in RUNS.items():
        assert exp.kind == kind
        assert set(exp.fixed) <= set(exp.argv_order)
        assert {p.target for p in exp.params} <= set(exp.argv_order)
