"""The API's request models, built from the one table of experiments (hostbench_common.experiments) and the kernels'
`--describe` (hostbench_common.describe): each parameter's type, bounds, default and description are the kernel's,
narrowed where the table says so; the kernels' cross-field rules (rules.py) are applied after the fields' own
checks. Nothing about an experiment is declared here."""
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self, Union

from hostbench_common.experiments import EXPERIMENTS as TABLE
from hostbench_common.experiments import (
    REFERENCE_ALLOWANCE_S,
    ROLE_OF,
    RUNNER_PARAMS,
    RUNS,
    SERVE_SLACK_S,
    Experiment,
    Run,
)
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    create_model,
    model_validator,
)

from app.experiments.rules import enforce

__all__ = ["EXPERIMENTS", "PARAMS", "REFERENCE_ALLOWANCE_S", "ROLE_OF", "RUNS", "SERVE_SLACK_S", "Experiment",
           "ExperimentKind", "RunExperimentKind", "expected_duration"]


def _distinct(v: list[Any]) -> list[Any]:
    if len({(type(x), x) for x in v}) != len(v):
        raise ValueError("values must be distinct")
    return v


def _scalar(schema: dict[str, Any]) -> Any:
    """A JSON Schema scalar as a pydantic type, strict (a string or bool is not a number), with its bounds."""
    kind = schema.get("type")
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]
    bounds = Field(ge=schema.get("minimum"), le=schema.get("maximum"), gt=schema.get("exclusiveMinimum"),
                   lt=schema.get("exclusiveMaximum"), multiple_of=schema.get("multipleOf"))
    if kind == "integer":
        return Annotated[StrictInt, bounds]
    if kind == "number":  # strict: a JSON integer is accepted, a string or bool is not
        return Annotated[StrictFloat, bounds]
    if kind == "boolean":
        return StrictBool
    if kind == "string":
        return Annotated[str, Field(min_length=schema.get("minLength"), max_length=schema.get("maxLength"),
                                    pattern=schema.get("pattern"))]
    raise TypeError(f"the API cannot type a parameter of JSON type {kind!r}")


def _extra(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The kernel's annotations a form reads, published as they are: x-unit ("B": a size in bytes)."""
    return {"x-unit": schema["x-unit"]} if "x-unit" in schema else None


def _field(schema: dict[str, Any]) -> tuple[Any, Any]:
    """(annotation, Field) of one parameter from its JSON Schema."""
    if "anyOf" in schema:  # a fan_out parameter: one value, or a list of distinct ones (one run per item)
        one, many = schema["anyOf"]
        item = _scalar(one)
        listed: Any = Annotated[list[item], Field(min_length=many.get("minItems"),  # type: ignore[valid-type]
                                                  max_length=many.get("maxItems")), AfterValidator(_distinct)]
        either: Any = Union[item, listed]  # noqa: UP007 - made at run time
        return either, Field(schema["default"], description=schema.get("description"),
                             json_schema_extra=_extra(schema))
    if schema.get("type") == "array":
        item = _scalar(schema["items"])
        annotation: Any = list[item]  # type: ignore[valid-type]
        if schema.get("uniqueItems"):
            annotation = Annotated[annotation, AfterValidator(_distinct)]
        # a plain default (pydantic copies it for each instance), so that the JSON Schema publishes it
        return annotation, Field(list(schema["default"]), min_length=schema.get("minItems"),
                                 max_length=schema.get("maxItems"), description=schema.get("description"),
                                 json_schema_extra=_extra(schema))
    return _scalar(schema), Field(schema["default"], description=schema.get("description"),
                                  json_schema_extra=_extra(schema))


# The run kind whose kernel rules each generated model is held to.
_RUN_OF: dict[type[BaseModel], Run] = {}


class _Ruled(BaseModel):
    """Parameters of one run kind: after their own checks, the kernel's cross-field rules (a 422 naming the field)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _kernel_rules(self) -> Self:
        enforce(_RUN_OF[type(self)], self)
        return self


def _model(e: Experiment) -> type[BaseModel]:
    fields: dict[str, Any] = {name: _field(sub) for name, sub in e.api_schema()["properties"].items()}
    name = "".join(part.title() for part in e.kind.split("_")) + "Params"
    model: type[BaseModel] = create_model(name, __base__=_Ruled, __module__=__name__, **fields)
    _RUN_OF[model] = e.run
    return model


# The request model of each experiment's params, e.g. PARAMS["cpu"] (CpuParams).
PARAMS: dict[str, type[BaseModel]] = {kind: _model(e) for kind, e in TABLE.items()}
assert set(RUNNER_PARAMS) <= set.intersection(*(set(m.model_fields) for m in PARAMS.values()))

EXPERIMENTS = TABLE
if TYPE_CHECKING:  # the kinds are the table's, known when it is read: a type checker sees a string
    ExperimentKind = str
    RunExperimentKind = str
else:
    ExperimentKind = Literal[tuple(TABLE)]
    # What a run of a job is, where it differs from its job's experiment (two hosts: one serve, one drive run).
    RunExperimentKind = Literal[tuple(RUNS)]


def expected_duration(kind: str, params: BaseModel | dict[str, Any]) -> float:
    """Seconds of measuring at most, plus the reference tools' allowance (of every run a job makes on one host)."""
    values = params.model_dump() if isinstance(params, BaseModel) else params
    return TABLE[kind].expected_duration(values) + TABLE[kind].reference_allowance(values)
