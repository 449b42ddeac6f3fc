"""The one place an experiment kind is declared: its parameter model (bounds checked at the API and
again at the runner against the kernel's own --describe), title, unit and expected duration."""
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, field_validator

CpuOp = Literal["fp64", "fp32", "int32"]
ThreadCount = Annotated[StrictInt, Field(ge=1, le=256)]
Seconds = StrictFloat | StrictInt


class CpuParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: CpuOp = Field("fp64", description="fp64 / fp32: fused multiply-add FLOPS; int32: vector integer adds")
    threads: list[ThreadCount] = Field(
        default=[1, 2, 4, 8], min_length=1, max_length=64, description="Thread counts to run, one after another"
    )
    repeats: StrictInt = Field(3, ge=1, le=100, description="Measured repeats per thread count")
    duration_s: Seconds = Field(5, ge=0.2, le=3600, description="Length of one repeat, seconds")
    warmup_s: Seconds = Field(1, ge=0, le=600, description="Warm-up before each thread count, excluded, seconds")

    @field_validator("threads")
    @classmethod
    def _distinct(cls, v: list[int]) -> list[int]:
        if len(set(v)) != len(v):
            raise ValueError("thread counts must be distinct")
        return v


class CpuTraceParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: CpuOp = Field("fp64", description="fp64 / fp32: fused multiply-add FLOPS; int32: vector integer adds")
    threads: ThreadCount = Field(1, description="Thread count held for the whole trace")
    duration_s: Seconds = Field(600, ge=1, le=86400, description="Trace length, seconds (one sample per second)")


@dataclass(frozen=True)
class Experiment:
    kind: str
    title: str
    description: str
    unit_hint: str
    params_model: type[BaseModel]
    expected_duration: Callable[[Any], float]


def _cpu_duration(p: CpuParams) -> float:
    return len(p.threads) * (p.warmup_s + p.repeats * p.duration_s)


EXPERIMENTS: dict[str, Experiment] = {
    e.kind: e
    for e in (
        Experiment(
            "cpu",
            "CPU throughput",
            "FP64/FP32 FLOPS or integer ops at each thread count, repeated; best vector ISA with FMA.",
            "GFLOP/s",
            CpuParams,
            _cpu_duration,
        ),
        Experiment(
            "cpu_trace",
            "CPU trace",
            "One thread count held for a duration, sampled every second (600 s = 600 samples).",
            "GFLOP/s",
            CpuTraceParams,
            lambda p: float(p.duration_s),
        ),
    )
}

ExperimentKind = Literal["cpu", "cpu_trace"]
