"""The kernels' cross-field parameter rules at the API: "x-rules" of `hbk <kernel> --describe`
(docs/kernel-protocol.md), read from the checked-in describe snapshot (kernel_describe.py, which a test keeps equal
to the built kernel's), applied to a job's parameters as the runner will pass them to the kernel. A broken rule is a
422 whose loc names the field, e.g. ["body", "params", "sizes"], with the kernel's own message.

A default the rules refuse is brought within a `maximum` rule instead (network, UDP: the default sizes' 65536
becomes 65507): a job that names no sizes gets ones its kernel takes."""
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from app.experiments.kernel_describe import DESCRIBE

# API parameters the runner acts on itself; never a kernel's.
RUNNER_ONLY = frozenset({"reference"})


@dataclass(frozen=True)
class KernelUse:
    """How an experiment's API parameters reach its kernel (hostbench_runner.experiments says the same for argv)."""

    kernel: str
    names: Mapping[str, str] = field(default_factory=dict)  # API name -> kernel name, where they differ
    fixed: Mapping[str, Any] = field(default_factory=dict)  # kernel parameters the experiment pins
    one_of_list: frozenset[str] = frozenset()  # API takes one value, the kernel a list of exactly it

    def kernel_name(self, api_name: str) -> str:
        return self.names.get(api_name, api_name)

    def api_name(self, kernel_name: str) -> str | None:
        for api, kern in self.names.items():
            if kern == kernel_name:
                return api
        return kernel_name


def schema(kernel: str) -> dict[str, Any]:
    """The kernel's parameters schema (properties and x-rules) from the describe snapshot."""
    return DESCRIBE[kernel]["parameters"]


def _text(value: Any) -> str:
    """A value as the kernel writes it in a message (as on its command line)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.15g}"
    return str(value)


def _same(a: Any, b: Any) -> bool:
    return bool(a == b) and isinstance(a, bool) == isinstance(b, bool)


def _problem(rule: Mapping[str, Any], item: Any, current: Any) -> str | None:
    if "enum" in rule:
        allowed = rule["enum"]
        return None if any(_same(item, e) for e in allowed) else f"is not one of {', '.join(map(_text, allowed))}"
    if "maximum" in rule:
        return f"is larger than {_text(rule['maximum'])}" if item > rule["maximum"] else None
    if "multipleOf" in rule:
        return f"is not a multiple of {_text(rule['multipleOf'])}" if item % rule["multipleOf"] else None
    if "maximumParam" in rule:
        other = rule["maximumParam"]
        return f"is larger than {other} {_text(current(other))}" if item > current(other) else None
    other = rule["minimumParam"]
    return f"is below {other} {_text(current(other))}" if item < current(other) else None


def violation(kernel: str, values: Mapping[str, Any]) -> tuple[Mapping[str, Any], Any, str] | None:
    """(rule, offending value, message) for the first rule of the kernel that `values` (kernel parameter names;
    absent ones at the kernel's defaults) break, else None. The message is the kernel's, word for word."""
    s = schema(kernel)
    props = s["properties"]

    def current(name: str) -> Any:
        return values[name] if name in values else props[name].get("default")

    for rule in s.get("x-rules", []):
        said: list[str] = []
        for name, cond in rule.get("when", {}).items():
            now = current(name)
            if "enum" in cond:
                if not any(_same(now, e) for e in cond["enum"]):
                    break
                said.append(f"{name} is {_text(now)}")
            elif isinstance(now, bool) or not isinstance(now, int | float) or not now > cond["exclusiveMinimum"]:
                break
            else:
                said.append(f"{name} > {_text(cond['exclusiveMinimum'])}")
        else:
            items = current(rule["param"])
            for item in items if isinstance(items, list) else [items]:
                problem = _problem(rule, item, current)
                if problem is not None:
                    condition = f" when {' and '.join(said)}" if said else ""
                    return rule, item, f"{rule['param']}: {_text(item)} {problem}{condition}; {rule['reason']}"
    return None


def kernel_values(use: KernelUse, params: BaseModel) -> dict[str, Any]:
    """The kernel parameters these API parameters become (those the API lacks stay at the kernel's defaults)."""
    out: dict[str, Any] = dict(use.fixed)
    for name in type(params).model_fields:
        if name in RUNNER_ONLY:
            continue
        value = getattr(params, name)
        out[use.kernel_name(name)] = [value] if name in use.one_of_list else value
    return out


def enforce(use: KernelUse, params: BaseModel) -> None:
    """Raise a ValidationError naming the field when the parameters break a rule of the kernel; first bring a
    defaulted field within a `maximum` rule (the default is the API's choice, not the person's)."""
    for _ in range(len(schema(use.kernel).get("x-rules", [])) + 1):
        found = violation(use.kernel, kernel_values(use, params))
        if found is None:
            return
        rule, item, message = found
        name = use.api_name(rule["param"])
        if name is None or name not in type(params).model_fields:
            raise ValueError(message)  # a parameter the API does not take: the params as a whole
        value = getattr(params, name)
        if "maximum" not in rule or name in params.model_fields_set or name in use.one_of_list:
            raise ValidationError.from_exception_data(type(params).__name__, [InitErrorDetails(
                type=PydanticCustomError("kernel_rule", message.replace("{", "(").replace("}", ")")),
                loc=(name,), input=item)])
        top = rule["maximum"]
        if isinstance(value, list):
            clamped = [min(v, top) for v in value]
            setattr(params, name, [v for i, v in enumerate(clamped) if v not in clamped[:i]])
        else:
            setattr(params, name, min(value, top))
    raise ValueError("the kernel's rules could not be met by bringing defaults within them")
