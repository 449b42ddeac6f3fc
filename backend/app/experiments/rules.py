"""The kernels' cross-field parameter rules at the API: "x-rules" of `hbk <kernel> --describe`
(docs/kernel-protocol.md), read from the checked-in describe snapshot (hostbench_common.describe, which a test keeps
equal to the built kernel's) and judged by the same code the runner uses (hostbench_common.schema.rule_violation),
applied to a job's parameters as the runner will pass them to the kernel. A broken rule is a 422 whose loc names the
field, e.g. ["body", "params", "sizes"], with the kernel's own message.

A default the rules refuse is brought within a `maximum` rule instead (network, UDP: the default sizes' 65536
becomes 65507): a job that names no sizes gets ones its kernel takes."""
from collections.abc import Mapping
from typing import Any

from hostbench_common.experiments import RUNNER_PARAMS, Run
from hostbench_common.schema import rule_violation
from pydantic import BaseModel, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError


def kernel_values(run: Run, params: BaseModel) -> dict[str, Any]:
    """The kernel parameters these API parameters become (those the API lacks stay at the kernel's defaults)."""
    out: dict[str, Any] = dict(run.fixed)
    for name in type(params).model_fields:
        p = run.param(name)
        if name in RUNNER_PARAMS or p is None:
            continue
        value = getattr(params, name)
        out[p.target] = [value] if p.one_of_list else value
    return out


def violation(run: Run, values: Mapping[str, Any]) -> tuple[Mapping[str, Any], Any, str] | None:
    """(rule, offending value, message) for the first rule of the kernel that `values` (kernel parameter names;
    absent ones at the kernel's defaults) break, else None. The message is the kernel's, word for word, less its
    conditions on the parameters the run kind pins (role)."""
    schema = run.kernel_schema()
    for rule in schema.get("x-rules", []):
        # a kernel param the run kind pins (network's role) is no person's: its condition goes unsaid
        found = rule_violation(rule, values, schema["properties"], unsaid=run.fixed)
        if found is not None:
            return rule, found[1], found[2]
    return None


def _first_violation(run: Run, params: BaseModel) -> tuple[Mapping[str, Any], Any, str] | None:
    """The first rule broken by any of the runs these parameters make: one per item of a fan_out list."""
    values = kernel_values(run, params)
    p = run.fan_out
    each = values.get(p.target) if p is not None else None
    for one in ([{**values, p.target: v} for v in each] if p is not None and isinstance(each, list) else [values]):
        found = violation(run, one)
        if found is not None:
            return found
    return None


def enforce(run: Run, params: BaseModel) -> None:
    """Raise a ValidationError naming the field when the parameters break a rule of the kernel; first bring a
    defaulted field within a `maximum` rule (the default is the API's choice, not the person's)."""
    for _ in range(len(run.kernel_schema().get("x-rules", [])) + 1):
        found = _first_violation(run, params)
        if found is None:
            return
        rule, item, message = found
        p = next((q for q in run.params if q.target == rule["param"]), None)
        if p is None or p.name not in type(params).model_fields:
            raise ValueError(message)  # a parameter the API does not take: the params as a whole
        value = getattr(params, p.name)
        if "maximum" not in rule or p.name in params.model_fields_set or p.one_of_list:
            raise ValidationError.from_exception_data(type(params).__name__, [InitErrorDetails(
                type=PydanticCustomError("kernel_rule", message.replace("{", "(").replace("}", ")")),
                loc=(p.name,), input=item)])
        top = rule["maximum"]
        if isinstance(value, list):
            clamped = [min(v, top) for v in value]
            setattr(params, p.name, [v for i, v in enumerate(clamped) if v not in clamped[:i]])
        else:
            setattr(params, p.name, min(value, top))
    raise ValueError("the kernel's rules could not be met by bringing defaults within them")
