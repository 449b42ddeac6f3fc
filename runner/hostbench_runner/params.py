"""A small JSON Schema validator for kernel parameters (the subset that `hbk <kernel> --describe`
publishes): type, minimum/maximum, exclusiveMinimum/exclusiveMaximum, enum, const, minItems/maxItems,
uniqueItems, items, minLength/maxLength, pattern, properties, required, additionalProperties.

The runner checks parameters again even though the API validated them (docs/reliability.md, rule 7): a
schema keyword this validator does not know is refused rather than silently ignored.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from .errors import ParamError

# Keywords that only annotate; they never constrain a value.
_ANNOTATIONS = {
    "title", "description", "default", "examples", "unit", "$schema", "$id", "$comment",
    "format", "help", "x-unit",
}
_CONSTRAINTS = {
    "type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "enum", "const",
    "minItems", "maxItems", "uniqueItems", "items", "minLength", "maxLength", "pattern",
    "properties", "required", "additionalProperties",
}


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


def validate(value: Any, schema: Mapping[str, Any], path: str = "") -> None:
    """Raise ParamError naming the first offending parameter; return None when the value fits."""
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


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
