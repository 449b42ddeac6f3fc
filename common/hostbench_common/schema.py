"""A small JSON Schema validator for kernel parameters (the subset that `hbk <kernel> --describe`
publishes, and what the experiment table narrows it with): type, minimum/maximum,
exclusiveMinimum/exclusiveMaximum, multipleOf, enum, const, minItems/maxItems,
uniqueItems, items, minLength/maxLength, pattern, properties, required, additionalProperties; and the
kernel's cross-field rules, "x-rules" (docs/kernel-protocol.md), refused with the kernel's own message.

The runner checks parameters with it again even though the API validated them (docs/reliability.md, rule 7), and
the API applies the same rules (`rule_violation`) to name the field in its 422. A schema keyword this validator
does not know is refused rather than silently ignored.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from typing import Any

from .errors import ParamError

# Keywords that only annotate; they never constrain a value.
_ANNOTATIONS = {
    "title", "description", "default", "examples", "unit", "$schema", "$id", "$comment",
    "format", "help", "x-unit",
    # which values of another parameter this one applies to: the runner leaves it out of the kernel's argv
    # otherwise (Run.applies_to), the kernel refuses it given for any other (its hb_applies)
    "x-applies",
}
_CONSTRAINTS = {
    "type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "enum", "const",
    "minItems", "maxItems", "uniqueItems", "items", "minLength", "maxLength", "pattern",
    "properties", "required", "additionalProperties", "x-rules",
}
# The keys of one rule of "x-rules": exactly one constraint, applied to every item of a list.
_RULE_CONSTRAINTS = {"maximum", "enum", "multipleOf", "maximumParam", "minimumParam"}
_RULE_KEYS = {"param", "when", "reason", *_RULE_CONSTRAINTS}


def _type_ok(value: Any, type_name: str) -> bool:
    if type_name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if type_name == "number":
        return (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and math.isfinite(value)
        )
    if type_name == "string":
        return isinstance(value, str)
    if type_name == "boolean":
        return isinstance(value, bool)
    if type_name == "array":
        return isinstance(value, list)
    if type_name == "object":
        return isinstance(value, dict)
    if type_name == "null":
        return value is None
    raise ParamError(f"schema uses unsupported type {type_name!r}")


def _where(path: str) -> str:
    return path or "params"


def validate(value: Any, schema: Mapping[str, Any], path: str = "", unsaid: Collection[str] = ()) -> None:
    """Raise ParamError naming the first offending parameter; return None when the value fits. `unsaid`: the
    parameters whose conditions a broken rule's message leaves out (rule_violation)."""
    if not isinstance(schema, Mapping):
        raise ParamError(f"{_where(path)}: schema is not an object")
    unknown = set(schema) - _ANNOTATIONS - _CONSTRAINTS
    if unknown:
        raise ParamError(f"{_where(path)}: schema keyword(s) {sorted(unknown)} not supported by the runner")

    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_type_ok(value, t) for t in types):
            raise ParamError(
                f"{_where(path)}: expected {' or '.join(types)}, got {type(value).__name__} {_short(value)}"
            )
    if "const" in schema and value != schema["const"]:
        raise ParamError(f"{_where(path)}: must be {schema['const']!r}")
    if "enum" in schema:
        # bool vs int: True == 1 in Python, but not in JSON.
        if not any(value == e and type(value) is type(e) for e in schema["enum"]):
            raise ParamError(f"{_where(path)}: {_short(value)} is not one of {schema['enum']}")

    if _type_ok(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            raise ParamError(f"{_where(path)}: {value} is below the minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ParamError(f"{_where(path)}: {value} is above the maximum {schema['maximum']}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            raise ParamError(f"{_where(path)}: {value} must be greater than {schema['exclusiveMinimum']}")
        if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
            raise ParamError(f"{_where(path)}: {value} must be less than {schema['exclusiveMaximum']}")
        if "multipleOf" in schema and value % schema["multipleOf"]:
            raise ParamError(f"{_where(path)}: {value} is not a multiple of {schema['multipleOf']}")

    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            raise ParamError(f"{_where(path)}: shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise ParamError(f"{_where(path)}: longer than {schema['maxLength']} characters")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            raise ParamError(f"{_where(path)}: {_short(value)} does not match {schema['pattern']!r}")

    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            raise ParamError(f"{_where(path)}: needs at least {schema['minItems']} item(s), got {len(value)}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise ParamError(f"{_where(path)}: at most {schema['maxItems']} item(s), got {len(value)}")
        if schema.get("uniqueItems"):
            seen: list[Any] = []
            for item in value:
                if any(item == s and type(item) is type(s) for s in seen):
                    raise ParamError(f"{_where(path)}: duplicate item {_short(item)}")
                seen.append(item)
        if "items" in schema:
            for i, item in enumerate(value):
                validate(item, schema["items"], f"{path}[{i}]")

    if isinstance(value, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                raise ParamError(f"{_join(path, name)}: required")
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            if name in props:
                validate(item, props[name], _join(path, name))
            elif extra is False:
                allowed = ", ".join(sorted(props)) or "none"
                raise ParamError(f"{_join(path, str(name))}: unknown parameter (allowed: {allowed})")
            elif isinstance(extra, dict):
                validate(item, extra, _join(path, str(name)))
        for rule in schema.get("x-rules", []):
            broken = rule_violation(rule, value, props, unsaid)
            if broken is not None:
                raise ParamError(broken[2])


def _text(value: Any) -> str:
    """A value as the kernel writes it in a message (as on its command line)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.15g}"
    return str(value)


def _same(a: Any, b: Any) -> bool:
    return a == b and isinstance(a, bool) == isinstance(b, bool)


def rule_violation(rule: Mapping[str, Any], value: Mapping[str, Any], props: Mapping[str, Any],
                   unsaid: Collection[str] = ()) -> tuple[str, Any, str] | None:
    """(parameter, offending item, message) when the parameters `value` (absent ones at their defaults in
    `props`) break one rule of a kernel's "x-rules", else None. The message is the kernel's own, word for word,
    less the conditions on `unsaid` parameters (checked all the same): those a person never sets (the network
    experiment's role: "when op is udp_rr", not "when op is udp_rr and role is loopback")."""
    if not isinstance(rule, Mapping) or set(rule) - _RULE_KEYS or len(set(rule) & _RULE_CONSTRAINTS) != 1:
        raise ParamError(f"x-rules: rule {_short(rule)} is not one the runner knows")

    def current(name: Any) -> Any:
        if isinstance(name, str) and name in value:
            return value[name]
        if isinstance(name, str) and isinstance(props.get(name), Mapping) and "default" in props[name]:
            return props[name]["default"]
        raise ParamError(f"x-rules: a rule names {name!r}, which the schema lacks")

    param = rule.get("param")
    when = rule.get("when", {})
    if not isinstance(when, Mapping):
        raise ParamError(f"x-rules: the rule on {param!r} has a malformed when")
    said: list[str] = []
    for name, cond in when.items():
        now = current(name)
        if not isinstance(cond, Mapping) or set(cond) not in ({"enum"}, {"exclusiveMinimum"}):
            raise ParamError(f"x-rules: the rule on {param!r} has a malformed condition on {name!r}")
        if "enum" in cond:
            if not any(_same(now, e) for e in cond["enum"]):
                return None
            if name not in unsaid:
                said.append(f"{name} is {_text(now)}")
        else:
            if isinstance(now, bool) or not isinstance(now, (int, float)) or not now > cond["exclusiveMinimum"]:
                return None
            said.append(f"{name} > {_text(cond['exclusiveMinimum'])}")
    items = current(param)
    for item in items if isinstance(items, list) else [items]:
        problem = _rule_problem(rule, item, current)
        if problem is not None:
            condition = f" when {' and '.join(said)}" if said else ""
            return str(param), item, f"{param}: {_text(item)} {problem}{condition}; {rule.get('reason', '')}"
    return None


def _rule_problem(rule: Mapping[str, Any], item: Any, current: Any) -> str | None:
    number = isinstance(item, (int, float)) and not isinstance(item, bool)
    if "enum" in rule:
        allowed = rule["enum"]
        return None if any(_same(item, e) for e in allowed) else f"is not one of {', '.join(map(_text, allowed))}"
    if not number:
        raise ParamError(f"x-rules: the rule on {rule.get('param')!r} needs a number, got {_short(item)}")
    if "maximum" in rule:
        return f"is larger than {_text(rule['maximum'])}" if item > rule["maximum"] else None
    if "multipleOf" in rule:
        return f"is not a multiple of {_text(rule['multipleOf'])}" if item % rule["multipleOf"] else None
    other = rule.get("maximumParam", rule.get("minimumParam"))
    limit = current(other)
    if "maximumParam" in rule:
        return f"is larger than {other} {_text(limit)}" if item > limit else None
    return f"is below {other} {_text(limit)}" if item < limit else None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
