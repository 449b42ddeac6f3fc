"""The one place an experiment kind is declared: its parameter model (bounds checked at the API and
again at the runner against the kernel's own --describe; cross-field rules read from that --describe, rules.py),
title, unit and expected duration."""
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    field_validator,
    model_validator,
)

from app.experiments.rules import KernelUse, enforce

CpuOp = Literal["fp64", "fp32", "int32"]
ThreadCount = Annotated[StrictInt, Field(ge=1, le=256)]
Seconds = StrictFloat  # strict: a JSON integer is accepted, a string or bool is not


class _Ruled(BaseModel):
    """Parameters of one kernel: after their own checks, the kernel's cross-field rules (a 422 naming the field)."""

    model_config = ConfigDict(extra="forbid")
    kernel_use: ClassVar[KernelUse]

    @model_validator(mode="after")
    def _kernel_rules(self) -> Self:
        enforce(self.kernel_use, self)
        return self


class CpuParams(_Ruled):
    kernel_use = KernelUse("cpu")

    op: CpuOp = Field("fp64", description="fp64 / fp32: fused multiply-add FLOPS; int32: vector integer adds")
    threads: list[ThreadCount] = Field(
        default=[1, 2, 4, 8], min_length=1, max_length=64, description="Thread counts to run, one after another"
    )
    repeats: StrictInt = Field(3, ge=1, le=100, description="Measured repeats per thread count")
    duration_s: Seconds = Field(5, ge=0.2, le=3600, description="Length of one repeat, seconds")
    warmup_s: Seconds = Field(1, ge=0, le=600, description="Warm-up before each thread count, excluded, seconds")
    stable_cv: Seconds = Field(0, ge=0, le=0.5, description="Repeat until stable: keep repeating until the coefficient "
                               "of variation is at most this (e.g. 0.035); 0 = exactly `repeats`")
    max_repeats: StrictInt = Field(10, ge=1, le=1000, description="Cap on repeats when repeating until stable")
    reference: StrictBool = Field(False, description="Also run HPL (hpcc) and likwid-bench peakflops afterwards")

    @field_validator("threads")
    @classmethod
    def _distinct(cls, v: list[int]) -> list[int]:
        if len(set(v)) != len(v):
            raise ValueError("thread counts must be distinct")
        return v


class CpuTraceParams(_Ruled):
    kernel_use = KernelUse("cpu", fixed={"repeats": 1, "warmup_s": 0}, one_of_list=frozenset({"threads"}))

    op: CpuOp = Field("fp64", description="fp64 / fp32: fused multiply-add FLOPS; int32: vector integer adds")
    threads: ThreadCount = Field(1, description="Thread count held for the whole trace")
    duration_s: Seconds = Field(600, ge=1, le=86400, description="Trace length, seconds (one sample per second)")


MemoryOp = Literal["copy", "read", "write", "rand_read", "rand_write", "stream_copy", "stream_scale", "stream_add",
                   "stream_triad", "stream_copy_nt", "stream_scale_nt", "stream_add_nt", "stream_triad_nt", "latency"]
DiskOp = Literal["rw", "seq_read", "seq_write", "rand_read", "rand_write"]
NetOp = Literal["tcp_stream", "udp_stream", "tcp_rr", "udp_rr"]
GpuOp = Literal["fp32_fma", "fp64_fma", "int32", "dram_bw", "h2d", "d2h"]
DEFAULT_BLOCKS = [8, 8192, 8388608, 83886080]  # 8 B, 8 KiB, 8 MiB, 80 MiB


def _distinct(v: list) -> list:
    if len(set(v)) != len(v):
        raise ValueError("values must be distinct")
    return v


def _threads_field() -> Any:
    return Field(default=[1, 2, 4, 8], min_length=1, max_length=64, description="Thread counts, one after another")


class _Repeated(_Ruled):

    repeats: StrictInt = Field(3, ge=1, le=100, description="Measured repeats per configuration")
    duration_s: Seconds = Field(3, ge=0.2, le=3600, description="Length of one repeat, seconds")
    warmup_s: Seconds = Field(1, ge=0, le=600, description="Warm-up before each configuration, excluded, seconds")
    stable_cv: Seconds = Field(0, ge=0, le=0.5, description="Repeat until stable: keep repeating until the coefficient "
                               "of variation is at most this (e.g. 0.035); 0 = exactly `repeats`")
    max_repeats: StrictInt = Field(10, ge=1, le=1000, description="Cap on repeats when repeating until stable")
    reference: StrictBool = Field(False, description="Also run the matched reference tool on the host afterwards")


class MemoryParams(_Repeated):
    kernel_use = KernelUse("memory")
    op: MemoryOp = Field("copy", description="Block op, STREAM-variant kernel (plain or non-temporal stores), or "
                                             "dependent-load latency")
    blocks: list[Annotated[StrictInt, Field(ge=8, le=1073741824, multiple_of=8)]] = Field(
        default=DEFAULT_BLOCKS, min_length=1, max_length=64, description="Block sizes, bytes (block ops)")
    sizes: list[Annotated[StrictInt, Field(ge=4096, le=1073741824)]] = Field(
        default=[4096, 65536, 1048576, 16777216, 268435456, 1073741824], min_length=1, max_length=64,
        description="Working-set sizes, bytes (latency op)")
    threads: list[ThreadCount] = _threads_field()

    _d1 = field_validator("blocks", "sizes", "threads")(classmethod(lambda cls, v: _distinct(v)))


class DiskParams(_Repeated):
    kernel_use = KernelUse("disk", names={"ops": "op"})
    ops: list[DiskOp] = Field(default=["seq_read", "seq_write", "rand_read", "rand_write", "rw"], min_length=1,
                              max_length=5, description="Operations: sequential/random read/write, 50/50 mixed")
    blocks: list[Annotated[StrictInt, Field(ge=1, le=83886080)]] = Field(
        default=DEFAULT_BLOCKS, min_length=1, max_length=64, description="Block sizes, bytes")
    direct: StrictBool = Field(False, description="O_DIRECT (bypass the page cache); blocks must be multiples of "
                                                  "the device's logical block size")
    iodepth: StrictInt = Field(1, ge=1, le=256, description="Outstanding I/Os per thread")
    file_size: StrictInt = Field(1073741824, ge=1048576, le=68719476736, description="Test file size, bytes")
    threads: list[ThreadCount] = _threads_field()

    _d1 = field_validator("ops", "blocks", "threads")(classmethod(lambda cls, v: _distinct(v)))

    @model_validator(mode="after")
    def _direct_alignment(self) -> "DiskParams":
        if self.direct:
            bad = [b for b in self.blocks if b % 512]
            if bad:
                raise ValueError(f"direct I/O needs blocks that are multiples of the device's logical block size "
                                 f"(512 B or 4 KiB); {bad} are not: use buffered I/O for those sizes")
        return self


class NetworkParams(_Repeated):
    kernel_use = KernelUse("net", fixed={"role": "loopback"})
    op: NetOp = Field("tcp_stream", description="Throughput (stream) or round-trip latency (rr), over loopback")
    sizes: list[Annotated[StrictInt, Field(ge=1, le=4194304)]] = Field(
        default=[1, 1024, 65536], min_length=1, max_length=64, description="Message sizes, bytes (UDP ≤ 65507)")
    streams: list[Annotated[StrictInt, Field(ge=1, le=8)]] = Field(
        default=[1], min_length=1, max_length=8, description="Parallel streams (threads), one count after another")
    poll: Literal["blocking", "busy"] = Field("blocking", description="Round trips: blocking receive or busy poll")

    _d1 = field_validator("sizes", "streams")(classmethod(lambda cls, v: _distinct(v)))


class NetworkPairParams(NetworkParams):
    # what the client host's driving run gets; the serving run gets op alone (its rules hold for any op)
    kernel_use = KernelUse("net", fixed={"role": "drive"})
    op: NetOp = Field("tcp_stream", description="Throughput (stream) or round-trip latency (rr), from the client host "
                                                "(host_ids[1]) to the server host (host_ids[0])")
    reference: StrictBool = Field(False, description="Also run iperf3 / sockperf / ping from the client host "
                                                     "against reference servers on the server host afterwards")


class GpuParams(_Repeated):
    kernel_use = KernelUse("gpu", names={"ops": "op"})
    ops: list[GpuOp] = Field(default=["fp32_fma", "fp64_fma", "int32", "dram_bw", "h2d", "d2h"], min_length=1,
                             max_length=6, description="FMA FLOPS, integer ops, device memory and PCIe copies")
    device: StrictInt = Field(0, ge=0, le=15, description="CUDA device index")
    bytes: StrictInt = Field(0, ge=0, le=10**12, description="Buffer size for bandwidth ops, bytes (0 = automatic)")

    _d1 = field_validator("ops")(classmethod(lambda cls, v: _distinct(v)))


@dataclass(frozen=True)
class Experiment:
    kind: str
    title: str
    description: str
    unit_hint: str
    params_model: type[BaseModel]
    expected_duration: Callable[[Any], float]


def _phases(configs: int, counts: int, p: _Repeated | CpuParams) -> float:
    repeats = max(p.repeats, p.max_repeats) if p.stable_cv > 0 else p.repeats  # the worst case
    return configs * counts * (p.warmup_s + repeats * p.duration_s)


def _cpu_duration(p: CpuParams) -> float:
    return _phases(1, len(p.threads), p)


def _memory_duration(p: MemoryParams) -> float:
    configs = len(p.sizes) if p.op == "latency" else 1 if p.op.startswith("stream_") else len(p.blocks)
    return _phases(configs, len(p.threads), p)


# Seconds a reference tool may add per configuration (hpcc runs its whole suite, not only HPL).
REFERENCE_ALLOWANCE_S = 300.0


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
        Experiment("memory", "Memory", "Bandwidth of block ops and STREAM-variant kernels; dependent-load latency "
                   "against working-set size.", "MB/s", MemoryParams, _memory_duration),
        Experiment("disk", "Disk", "Sequential/random read/write and mixed I/O over block sizes; buffered or direct; "
                   "MB/s, IOPS and latency percentiles.", "MB/s", DiskParams,
                   lambda p: _phases(len(p.ops) * len(p.blocks), len(p.threads), p)),
        Experiment("network", "Network (loopback)", "TCP/UDP throughput and round-trip latency over loopback on one "
                   "host.", "Mbit/s", NetworkParams, lambda p: _phases(len(p.sizes), len(p.streams), p)),
        Experiment("network_pair", "Network (two hosts)", "TCP/UDP throughput and round-trip latency between two "
                   "hosts: host_ids[0] serves on a port it chooses, host_ids[1] drives.", "Mbit/s",
                   NetworkPairParams, lambda p: _phases(len(p.sizes), len(p.streams), p)),
        Experiment("gpu", "GPU (CUDA)", "FP32/FP64 FMA FLOPS, integer ops, device memory bandwidth, host-device "
                   "copies.", "GFLOP/s", GpuParams, lambda p: _phases(len(p.ops), 1, p)),
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

ExperimentKind = Literal["cpu", "cpu_trace", "memory", "disk", "network", "network_pair", "gpu"]
# What a run of a job is, where it differs from its job's experiment (network_pair: one serve, one drive run).
RunExperimentKind = Literal["cpu", "cpu_trace", "memory", "disk", "network", "gpu", "network_serve", "network_drive"]
# A serving kernel outlives its driver's expected duration by this much before its runner's deadline stops it.
SERVE_SLACK_S = 600.0


def reference_allowance(kind: str, params: BaseModel) -> float:
    if not getattr(params, "reference", False):
        return 0.0
    counts = len(getattr(params, "threads", None) or [1])
    return REFERENCE_ALLOWANCE_S * counts
