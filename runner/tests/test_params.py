import pytest
from hostbench_common.schema import validate

from hostbench_runner.errors import ParamError

GOOD = {"op": "fp64", "threads": [1, 2, 4, 8], "repeats": 3, "duration_s": 5, "warmup_s": 1}


def test_valid_params_pass(cpu_schema):
    validate(GOOD, cpu_schema)
    validate({**GOOD, "duration_s": 0.5, "warmup_s": 0}, cpu_schema)


@pytest.mark.parametrize(
    "patch, message",
    [
        ({"threads": "4; rm -rf /"}, "threads: expected array"),
        ({"threads": ["4; rm -rf /"]}, "threads[0]: expected integer"),
        ({"op": "fp64; rm -rf /"}, "is not one of"),
        ({"op": "--threads"}, "is not one of"),
        ({"repeats": "3"}, "repeats: expected integer"),
        ({"repeats": 3.0}, "repeats: expected integer"),
        ({"repeats": True}, "repeats: expected integer"),
        ({"duration_s": "5"}, "duration_s: expected number"),
        ({"duration_s": float("nan")}, "duration_s: expected number"),
        ({"duration_s": float("inf")}, "duration_s: expected number"),
        ({"warmup_s": None}, "warmup_s: expected number"),
    ],
)
def test_bad_types_are_refused(cpu_schema, patch, message):
    with pytest.raises(ParamError, match=message.replace("[", r"\[").replace("]", r"\]")):
        validate({**GOOD, **patch}, cpu_schema)


@pytest.mark.parametrize(
    "patch, message",
    [
        ({"threads": [0]}, r"threads\[0\]: 0 is below the minimum 1"),
        ({"threads": [1, 257]}, r"threads\[1\]: 257 is above the maximum 256"),
        ({"threads": []}, "at least 1 item"),
        ({"threads": list(range(1, 66))}, "at most 64 item"),
        ({"threads": [2, 2]}, "duplicate item"),
        ({"repeats": 0}, "below the minimum"),
        ({"repeats": 101}, "above the maximum"),
        ({"duration_s": 0.1}, "below the minimum 0.2"),
        ({"duration_s": 86400.5}, "above the maximum 86400"),
        ({"warmup_s": -1}, "below the minimum 0"),
    ],
)
def test_out_of_bounds_values_are_refused(cpu_schema, patch, message):
    with pytest.raises(ParamError, match=message):
        validate({**GOOD, **patch}, cpu_schema)


def test_unknown_keys_are_refused(cpu_schema):
    with pytest.raises(ParamError, match="shell: unknown parameter"):
        validate({**GOOD, "shell": "rm -rf /"}, cpu_schema)


def test_top_level_must_be_an_object(cpu_schema):
    with pytest.raises(ParamError, match="params: expected object"):
        validate(["op", "fp64"], cpu_schema)


def test_required_keys():
    schema = {"type": "object", "required": ["op"], "properties": {"op": {"type": "string"}}}
    with pytest.raises(ParamError, match="op: required"):
        validate({}, schema)


def test_unsupported_schema_keyword_is_refused_not_ignored():
    with pytest.raises(ParamError, match="not supported"):
        validate(3, {"type": "integer", "dependentRequired": {}})


def test_enum_distinguishes_bool_from_int():
    with pytest.raises(ParamError):
        validate(True, {"enum": [1, 2]})
    validate(1, {"enum": [1, 2]})


def test_strings_length_and_pattern():
    schema = {"type": "string", "minLength": 1, "maxLength": 4, "pattern": "^[a-z]+$"}
    validate("abc", schema)
    for bad in ("", "abcde", "ab;c"):
        with pytest.raises(ParamError):
            validate(bad, schema)
