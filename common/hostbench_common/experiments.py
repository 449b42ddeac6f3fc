"""The one table of experiments. Everything else reads it: the API builds its request models from it (and the
kernels' `--describe` in describe.py) and publishes it at /api/experiments, the dashboard draws its form and its
duration estimate from that, the runner turns a run's parameters into the kernel's argv with it.

Two levels. A *run kind* (RUNS) is what one runner executes on one host: a kernel, the parameters a job may set
and the ones the kind pins, their argv order. An *experiment* (EXPERIMENTS) is what a person asks for: a title,
its runs by role (one host: "host"; two hosts: "serve" on host_ids[0], "drive" on host_ids[1]), its unit, the
parameters it takes (its own run kind's, or its driving run's). Two-host is a capability of an experiment (its
roles), never read from its name.

A parameter's type, bounds, default and description are the kernel's own (`hbk <kernel> --describe`); an entry
here may only narrow them (`narrow`: a tighter bound, another default for this experiment). Adding an experiment
is one entry in RUNS and one in EXPERIMENTS.
"""

from __future__ import annotations

import copy
import ipaddress
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .describe import DESCRIBE
from .errors import ParamError
from .reftools.hpcc import HPCC_TIMEOUT_S, HPL_N_MAX, HPL_TARGET_S
from .schema import validate

# Parameters the runner itself acts on, for every experiment; never passed to a kernel.
# reference: after the kernel succeeded, run the matched reference tools too (reftools/).
RUNNER_PARAMS: dict[str, dict[str, Any]] = {
    "reference": {"type": "boolean", "default": False,
                  "description": "Also run the matched reference tools on the host afterwards (HPL, likwid-bench, "
                                 "STREAM, fio, IOzone, iperf3, sockperf, ping), each beside our figure"},
}
# Disk: where a run's test file goes, by a name the runner's owner configured on the runner (--disk-target
# NAME=PATH, runner/hostbench_runner/config.py) and its inventory advertises; DISK_TARGET_WORK is the run's own
# directory under the runner's work dir. A request names a target, never a path: the runner maps the name.
DISK_TARGET_WORK = "work"
DISK_TARGET: dict[str, Any] = {
    "type": "string", "pattern": r"^[a-z][a-z0-9_-]{0,31}$", "maxLength": 32, "default": DISK_TARGET_WORK,
    "description": "Where the test file goes: a disk target the host's runner offers (its owner configures them "
                   "on the runner, --disk-target NAME=PATH; the host's inventory lists them), or work: the run's "
                   "own directory under the runner's work directory"}
# cpu: the problem size N of the reference HPL (hpcc) at each thread count; 0 sizes it from our own figure.
HPL_N: dict[str, Any] = {
    "type": "integer", "minimum": 0, "maximum": HPL_N_MAX, "default": 0,
    "description": f"With reference on (fp64): the problem size N of hpcc's HPL at each thread count, up to "
                   f"{HPL_N_MAX} (a quarter of the host's RAM bounds it still: the matrix is 8 N^2 bytes). 0 sizes "
                   f"it from our own figure (about {HPL_TARGET_S:.0f} s of HPL). A larger N runs longer: hpcc is "
                   f"stopped and reported failed after {HPCC_TIMEOUT_S:.0f} s or at the run's deadline"}
# The cap of the reference tools per thread count of a job (hpcc runs its whole suite, not only HPL): part of the
# deadline, never the estimate (that is their typical time, estimate.py); none where no tool applies.
REFERENCE_ALLOWANCE_S = 300.0
# A serving kernel outlives its driver's expected duration by this much before its runner's deadline stops it.
SERVE_SLACK_S = 600.0


@dataclass(frozen=True)
class Param:
    """One parameter a job may set, and the kernel parameter it feeds."""

    name: str
    kernel_name: str | None = None  # defaults to name
    one_of_list: bool = False  # the job gives one value; the kernel takes a list of exactly it
    # JSON Schema keywords that replace the kernel's for this experiment: only ever narrower (a test checks),
    # "items" merged into the kernel's items.
    narrow: Mapping[str, Any] = field(default_factory=dict)
    # A list whose every item is measured one after another: a factor of the expected duration.
    per_item: bool = False
    # Set by the server when it hands the run out (the driving run's peer and port), never by a person.
    by_server: bool = False
    # A job may give a list of values instead of one (distinct, at least one): the job fans out into one run per
    # host and value, each run with one value. At most one such parameter per run kind; one-host experiments only.
    fan_out: bool = False

    @property
    def target(self) -> str:
        return self.kernel_name or self.name


@dataclass(frozen=True)
class Run:
    """What one runner executes: a kernel and how a job's parameters become its argv."""

    kind: str
    kernel: str
    params: tuple[Param, ...]  # what a job may set
    fixed: Mapping[str, Any] = field(default_factory=dict)  # kernel params this kind pins
    argv_order: tuple[str, ...] = ()  # kernel params in argv order; every one is passed unless it does not apply
    # A kernel param the runner fills from the assignment's deadline_s (serve: --serve_s), never from params.
    deadline_param: str | None = None
    # Params the server adds for itself (the driving run: server_run_id); accepted, never passed to the kernel.
    server_params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # Params a job sets that this kind's runner acts on, never passed to the kernel as they are (disk: target).
    runner_params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # A kernel param the runner fills with the directory it made for the run (disk: --workdir on a target).
    workdir_param: str | None = None
    # A last check of the validated params, beyond the kernel's schema (drive: peer is an IP literal).
    check: Callable[[Mapping[str, Any]], None] | None = None
    unit: str = ""  # the unit of its samples and results
    units_by_op: Mapping[str, str] = field(default_factory=dict)  # where an op measures in another unit
    # What its figures are set against (peaks.py here computes cpu, the API's results/limits.py the rest): cpu (per
    # op and thread count), memory (DIMM bandwidth), disk, nic (the link), loopback (none: no link), gpu; "" none.
    peak: str = ""
    trace: bool = False  # its samples are one long phase, summarised as a trace (throttled stretches)
    # The reference tools run after its kernel when a job asks (reftools/table.py builds their plans; a driving
    # run's run against its peer's servers). A trace and a serving run have none; a GPU's peak comes from the
    # device's attributes, with no tool to run.
    references: tuple[str, ...] = ()
    # Whether the kernel's threads compute all the time, so that a CPU share below 1 means someone else took the
    # CPU (the "disturbed" verdict): True, False (they sleep by design: blocking I/O, waiting on a socket or a
    # GPU), or only while a parameter has one of these values ({"poll": ("busy",)}).
    cpu_bound: bool | Mapping[str, tuple[Any, ...]] = True
    # It runs on a GPU: the API refuses it on a host whose inventory lists none (hostfit.py; inventory["gpus"]).
    needs_gpu: bool = False

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def applies_of(self, p: Param) -> dict[str, tuple[Any, ...]] | None:
        """The values of other job parameters for which `p` means anything ({"op": ("latency",)}), as its kernel
        declares them ("x-applies" of `hbk <kernel> --describe`: the kernel refuses it given with any other); None
        when it always applies. Passed to the kernel only while they hold; the dashboard does not ask for it
        otherwise, and the API refuses it given for no run of a job."""
        declared = self.kernel_schema().get("properties", {}).get(p.target, {}).get("x-applies")
        if not declared:
            return None
        by_target = {q.target: q.name for q in self.params}
        return {by_target.get(k, k): tuple(v) for k, v in declared.items()}

    def applies_to(self, p: Param, params: Mapping[str, Any], defaults: Mapping[str, Any]) -> bool:
        """Whether `p` applies while the job's parameters are `params` (absent ones at `defaults`)."""
        applies = self.applies_of(p)
        if not applies:
            return True
        return all(params.get(k, defaults.get(k)) in allowed for k, allowed in applies.items())

    def applying(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """One run's params without those that do not apply to it (a memory read's `sizes`, a STREAM op's
        `blocks`): what it stores and shows."""
        conditional = [(p, applies) for p in self.params if (applies := self.applies_of(p))]
        if not conditional:
            return dict(params)
        # the defaults only where a condition's parameter is absent (a stored run has them all)
        defaults = self.defaults() if any(k not in params for _, a in conditional for k in a) else {}
        dropped = {p.name for p, _ in conditional if not self.applies_to(p, params, defaults)}
        return {k: v for k, v in params.items() if k not in dropped}

    def kernel_schema(self) -> dict[str, Any]:
        """The kernel's parameter schema (properties and x-rules), from the describe snapshot."""
        schema: dict[str, Any] = DESCRIBE[self.kernel]["parameters"]
        return schema

    def param_schema(self, p: Param, kernel_schema: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The JSON Schema of one job parameter: the kernel's, unwrapped for one_of_list, narrowed by the table."""
        props = (kernel_schema or self.kernel_schema()).get("properties", {})
        if p.target not in props:
            raise ParamError(f"kernel {self.kernel!r} has no parameter {p.target!r} (is the kernel binary up to date?)")
        sub = copy.deepcopy(props[p.target])
        if p.one_of_list:
            if sub.get("type") != "array" or "items" not in sub:
                raise ParamError(f"kernel parameter {p.target!r} is not a list")
            sub = {**copy.deepcopy(sub["items"]), "description": sub.get("description", ""),
                   **({"x-unit": sub["x-unit"]} if "x-unit" in sub else {})}
        for key, value in p.narrow.items():
            if key == "items":
                sub["items"] = {**sub.get("items", {}), **copy.deepcopy(dict(value))}
            else:
                sub[key] = copy.deepcopy(value)
        return sub

    @property
    def fan_out(self) -> Param | None:
        """The parameter a job may give a list of (one run per item), if any."""
        return next((p for p in self.params if p.fan_out), None)

    def job_params(self) -> tuple[Param, ...]:
        """The parameters a person sets (not those the server fills in)."""
        return tuple(p for p in self.params if not p.by_server)

    def api_schema(self, kernel_schema: Mapping[str, Any] | None = None, *, with_defaults: bool = False,
                   server: bool = True) -> dict[str, Any]:
        """The JSON Schema of this kind's params. The runner checks all of them without defaults (an absent param
        takes the kernel's, or the table's narrowed one, when the argv is built); the API publishes a person's
        (server=False) with their defaults."""
        out: dict[str, Any] = {}
        for p in self.params if server else self.job_params():
            sub = self.param_schema(p, kernel_schema)
            if p.fan_out and not server:  # a job's: one value or a list of them; a run's: always one
                sub = fan_out_schema(sub)
            if not with_defaults:
                sub.pop("default", None)
            out[p.name] = sub
        for name, runner_sub in {**RUNNER_PARAMS, **self.runner_params}.items():
            out[name] = copy.deepcopy(dict(runner_sub)) if with_defaults else {
                k: v for k, v in runner_sub.items() if k != "default"}
        if server:
            out.update(copy.deepcopy(dict(self.server_params)))
        return {"type": "object", "additionalProperties": False, "properties": out}

    def defaults(self, kernel_schema: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Each job parameter's default (narrowed by the table where it says so)."""
        out: dict[str, Any] = {}
        for p in self.params:
            sub = self.param_schema(p, kernel_schema)
            if "default" in sub:
                out[p.name] = sub["default"]
        return out

    def fixed_job_values(self) -> dict[str, Any]:
        """The job-level values of parameters this kind pins (cpu_trace: one repeat, no warm-up)."""
        return {k: v for k, v in self.fixed.items() if k in ("repeats", "warmup_s")}

    @staticmethod
    def wants_reference(params: Mapping[str, Any]) -> bool:
        """Only after kernel_params() accepted params (the flag is then a bool or absent)."""
        return params.get("reference") is True

    def kernel_params(self, params: Mapping[str, Any], kernel_schema: Mapping[str, Any] | None = None,
                      deadline_s: float | None = None, workdir: str | None = None) -> dict[str, Any]:
        """Validate a job's params, then return the complete kernel parameters (validated too). workdir: the
        directory the runner made for the run (workdir_param); None leaves the kernel's default."""
        if not isinstance(params, dict):
            raise ParamError(f"params: expected object, got {type(params).__name__}")
        kschema = kernel_schema or self.kernel_schema()
        validate(params, self.api_schema(kschema))
        if self.check is not None:
            self.check(params)
        defaults = self.defaults(kschema)
        props = kschema.get("properties", {})
        dropped = {p.target for p in self.params if not self.applies_to(p, params, defaults)}
        if not params.get("stable_cv"):  # fixed repeats: the kernel's defaults, argv stays short
            dropped |= set(STABLE_ARGV)
        dropped |= {name for name in BUSY_ARGV if not params.get(name)}  # 0: the kernel's default, argv stays short
        if not params.get("work"):  # fixed duration: the kernel's default
            dropped.add("work")
        out: dict[str, Any] = {}
        for name in self.argv_order:
            if name in dropped:
                continue
            if name in self.fixed:
                out[name] = self.fixed[name]
                continue
            if name == self.workdir_param:
                if workdir is not None:
                    out[name] = workdir
                continue
            if name == self.deadline_param:
                if deadline_s is None or not math.isfinite(deadline_s) or deadline_s <= 0:
                    raise ParamError(f"{name}: needs the run's deadline_s")
                top = props.get(name, {}).get("maximum")
                out[name] = max(1, math.ceil(deadline_s))
                if isinstance(top, (int, float)):
                    out[name] = min(out[name], int(top))
                continue
            p = next((q for q in self.params if q.target == name), None)
            if p is not None and p.name in params:
                value = params[p.name]
            elif p is not None and p.name in defaults:
                value = copy.deepcopy(defaults[p.name])
            elif name in props and props[name].get("default") is not None:
                out[name] = copy.deepcopy(props[name]["default"])
                continue
            else:
                raise ParamError(f"{p.name if p else name}: required (the kernel has no default)")
            out[name] = [value] if p is not None and p.one_of_list else value
        validate(out, kschema, unsaid=tuple(self.fixed))  # the API's words: no condition on what the kind pins
        return out

    def argv(self, kernel_bin: Path | str, kernel_params: Mapping[str, Any]) -> list[str]:
        argv = [str(kernel_bin), self.kernel]
        for name in self.argv_order:
            if name in kernel_params:
                argv += [f"--{name}", format_arg(name, kernel_params[name])]
        return argv

    def judged_by_cpu_share(self, params: Mapping[str, Any]) -> bool:
        """Whether a CPU share below 1 in this run's results says its threads were disturbed."""
        if isinstance(self.cpu_bound, bool):
            return self.cpu_bound
        return all(params.get(k) in allowed for k, allowed in self.cpu_bound.items())

    def unit_for(self, params: Mapping[str, Any]) -> str:
        """The unit its live samples and results are in, before any arrive (results carry their own)."""
        op = params.get("op")
        return self.units_by_op.get(op, self.unit) if isinstance(op, str) else self.unit


@dataclass(frozen=True)
class Experiment:
    """What a person asks for: one run per host, each of a run kind, by role."""

    kind: str
    title: str
    description: str
    roles: tuple[tuple[str, str], ...]  # (role, run kind) in host_ids order: (("host", "cpu"),) or serve, drive
    params_of: str  # the run kind whose parameters the job takes (the driving run's, for two hosts)
    # Of the parameters, the one whose length counts the reference tools' allowance (one pass per thread count).
    reference_per: str | None = "threads"

    @property
    def hosts(self) -> int:
        return len(self.roles)

    @property
    def run(self) -> Run:
        return RUNS[self.params_of]

    def run_kind(self, role: str) -> str:
        return dict(self.roles)[role]

    @property
    def unit(self) -> str:
        return self.run.unit

    def api_schema(self) -> dict[str, Any]:
        """The job's parameters as JSON Schema, with defaults; the server's own params left out."""
        return self.run.api_schema(with_defaults=True, server=False)

    def split(self, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The params of each run a job of these params makes on one host: one per item of its `fan_out`
        parameter when the job gives a list (op: ["fp64", "fp32"]), else the params as they are."""
        p = self.run.fan_out
        values = params.get(p.name) if p is not None else None
        if p is None or not isinstance(values, list):
            return [dict(params)]
        return [{**params, p.name: v} for v in values]

    def expected_duration(self, params: Mapping[str, Any]) -> float:
        """Seconds of measuring at most (repeat-until-stable at its cap), without the reference tools: the sum over
        the runs a job makes on one host (`split`)."""
        return sum(self._run_duration(one) for one in self.split(params))

    def _run_duration(self, params: Mapping[str, Any], typical: bool = False) -> float:
        run = self.run
        values = {**run.defaults(), **{k: v for k, v in params.items() if v is not None}}
        values.update(run.fixed_job_values())
        configs = 1
        for p in run.params:
            if p.per_item and run.applies_to(p, values, values) and isinstance(values.get(p.name), list):
                configs *= len(values[p.name])
        repeats = values.get("repeats", 1)
        if values.get("stable_cv", 0) > 0 and not typical:
            repeats = max(repeats, values.get("max_repeats", repeats))
        duration = values.get("duration_s", 0)
        # busy hosts: every measured phase may wait quiet_wait_s and be measured disturbed_retries more times (the
        # cap; a quiet host, the typical time, neither waits nor repeats)
        busy = 0 if typical else values.get("quiet_wait_s", 0) + values.get("disturbed_retries", 0) * duration
        return float(configs * (values.get("warmup_s", 0) + repeats * (duration + busy)))

    def typical_duration(self, params: Mapping[str, Any], cpus: int | None = None,
                         mem_bytes: int | None = None) -> float:
        """What a job of these params usually takes on one host (estimate.py): per run, its kernel at the repeats
        asked and the typical time of the reference tools it plans (none where no tool applies)."""
        from .estimate import reference_typical

        return round(sum(self._run_duration(one, typical=True)
                         + reference_typical(self.params_of, one, cpus, mem_bytes)
                         for one in self.split(params)), 1)

    def reference_allowance(self, params: Mapping[str, Any]) -> float:
        return sum(self._run_reference_allowance(one) for one in self.split(params))

    def _run_reference_allowance(self, params: Mapping[str, Any]) -> float:
        """The cap for the reference tools: REFERENCE_ALLOWANCE_S per item of reference_per, at least 1.5 x their
        typical time; 0 where no tool applies (INT32, a trace)."""
        from .estimate import reference_plans, runs

        if params.get("reference") is not True:
            return 0.0
        tools = runs(reference_plans(self.params_of, params))
        if not tools:
            return 0.0
        per = params.get(self.reference_per) if self.reference_per else None
        allowance = REFERENCE_ALLOWANCE_S * (len(per) if isinstance(per, list) and per else 1)
        return max(allowance, round(1.5 * sum(p.typical_s for p in tools), 1))

    def terms(self) -> dict[str, Any]:
        """How the expected duration is computed, as data for the dashboard (which keeps no copy of the
        formula's terms): configurations = the product of the lengths of `per_item` lists that apply;
        duration = configurations x (warmup_s + repeats x (duration_s + quiet_wait_s + disturbed_retries x
        duration_s)), repeats at max_repeats when stable_cv > 0;
        plus `reference_allowance_s` per item of `reference_per` when reference is on; and when the job gives a
        list for the `fan_out` parameter, the sum of that over one run per item."""
        fan_out = self.run.fan_out
        return {"per_item": [p.name for p in self.run.params if p.per_item],
                "fan_out": fan_out.name if fan_out is not None else None,
                "fixed": self.run.fixed_job_values(),
                "reference_allowance_s": REFERENCE_ALLOWANCE_S, "reference_per": self.reference_per}

    def applies(self) -> dict[str, dict[str, list[Any]]]:
        """Parameters that apply only to some values of another ({"sizes": {"op": ["latency"]}})."""
        return {p.name: {k: list(v) for k, v in applies.items()} for p in self.run.params
                if (applies := self.run.applies_of(p))}


def _check_drive(params: Mapping[str, Any]) -> None:
    """The peer is the serving host's address as the server recorded it: an IP literal, never a name."""
    peer, port = params.get("peer"), params.get("port")
    try:
        ipaddress.ip_address(peer if isinstance(peer, str) else "")
    except ValueError:
        raise ParamError(f"peer: {peer!r} is not an IPv4 or IPv6 address literal") from None
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise ParamError(f"port: {port!r} is not a port (1..65535)")


def fan_out_schema(one: Mapping[str, Any]) -> dict[str, Any]:
    """A fan_out parameter as a job gives it: one value, or a list of distinct ones (at most every choice)."""
    item = {k: copy.deepcopy(v) for k, v in one.items() if k not in ("default", "description", "x-unit")}
    top = len(item["enum"]) if "enum" in item else 64
    out: dict[str, Any] = {"anyOf": [item, {"type": "array", "items": copy.deepcopy(item), "minItems": 1,
                                            "maxItems": top, "uniqueItems": True}]}
    if "default" in one:
        out["default"] = copy.deepcopy(one["default"])
    out["description"] = (one.get("description", "") + " A list of them runs each: one run per item.").strip()
    if "x-unit" in one:
        out["x-unit"] = one["x-unit"]
    return out


# The driving run: the ports of the reference servers its peer offers (reftools/serve.py), added by the server.
REFERENCE_PORTS: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "properties": {tool: {"type": "integer", "minimum": 1, "maximum": 65535} for tool in ("iperf3", "sockperf")},
}

# Repeat until stable (harness params of every kernel).
STABLE = (Param("stable_cv"), Param("max_repeats"))
STABLE_ARGV = ("stable_cv", "max_repeats")
# Busy hosts (harness params of every kernel): wait for a quiet CPU before each measured phase, up to quiet_wait_s;
# measure a disturbed phase again, up to disturbed_retries more times. Left out of the argv while 0.
BUSY = (Param("quiet_wait_s"), Param("disturbed_retries"))
BUSY_ARGV = ("quiet_wait_s", "disturbed_retries")
# A measured phase is an hour at most for the repeated experiments (a trace is one phase of up to a day), and
# three seconds by default.
PHASE = Param("duration_s", narrow={"maximum": 3600, "default": 3})
REPEATED = (Param("repeats"), PHASE, Param("warmup_s"), *STABLE, *BUSY)
THREADS = Param("threads", per_item=True)
# The vector ISA of the kernel's loops (auto: the widest the CPU has), to compare them. The API refuses one a picked
# host's inventory says it lacks (hostfit.py); the kernel refuses one the CPU lacks (error code unsupported).
ISA = Param("isa")
# Strong scaling (cpu): a fixed amount of work per repeat, split over the threads; duration_s is then its cap and
# each result carries elapsed_s (the slowest thread's), from which the result gives speedup and efficiency.
# 0 (the default) is the fixed-duration run, and leaves it out of the argv.
WORK = Param("work")
# A one-host job may give a list of ops: one run per op (a two-host job is one serve and one drive run, so one op).
OPS = Param("op", fan_out=True)
# The memory kernel's block ops and STREAM-variant ops: those its `blocks` and its `array_size` apply to.
MEMORY_BLOCK_OPS: tuple[str, ...] = tuple(DESCRIBE["memory"]["parameters"]["properties"]["blocks"]["x-applies"]["op"])
MEMORY_STREAM_OPS: tuple[str, ...] = tuple(
    DESCRIBE["memory"]["parameters"]["properties"]["array_size"]["x-applies"]["op"])
NET_UNITS = {"tcp_rr": "RT/s", "udp_rr": "RT/s"}
NET_TOOLS = ("iperf3", "sockperf", "ping")
# A network kernel's threads spin only when they busy-poll; blocking, they sleep in recv by design.
NET_BUSY = {"poll": ("busy",)}
NET_OPTIONS = (Param("sizes", per_item=True), Param("streams", per_item=True), Param("poll"), *REPEATED)

RUNS: dict[str, Run] = {r.kind: r for r in (
    Run("cpu", "cpu", (OPS, ISA, THREADS, Param("repeats"), Param("duration_s", narrow={"maximum": 3600}),
                       Param("warmup_s"), *STABLE, *BUSY, WORK),
        runner_params={"hpl_n": HPL_N},
        argv_order=("op", "isa", "threads", "repeats", "duration_s", "warmup_s", *STABLE_ARGV, *BUSY_ARGV, "work"),
        unit="GFLOP/s", units_by_op={"int32": "GIOP/s"}, peak="cpu", references=("hpcc", "likwid-bench")),
    Run("cpu_trace", "cpu", (OPS, ISA, Param("threads", one_of_list=True, narrow={
                                 "default": 1, "description": "Thread count held for the whole trace"}),
                             Param("duration_s", narrow={"minimum": 1, "default": 600, "description":
                                   "Trace length, seconds (one sample per second)"})),
        fixed={"repeats": 1, "warmup_s": 0},
        argv_order=("op", "isa", "threads", "repeats", "duration_s", "warmup_s"),
        unit="GFLOP/s", units_by_op={"int32": "GIOP/s"}, peak="cpu", trace=True),
    # The kernel's working directory is the run's own directory under the runner's work dir; `workdir` is never a
    # job parameter (a path from a request): the disk kernel's default "." is that directory, or the runner sets
    # it to a fresh directory on the target a job names (DISK_TARGET).
    Run("memory", "memory",
        (OPS, ISA,
         # Which op each of these applies to is the kernel's declaration (its x-applies; Run.applies_of).
         Param("blocks", per_item=True, narrow={"items": {"multipleOf": 8}}),
         # Cache-resident runs: a buffer (block ops) or arrays (STREAM ops) smaller than 4x the L3 only with
         # allow_cache; each result then says the level its working set fits in (level: L1, L2, L3, DRAM).
         Param("buffer_bytes"),
         Param("array_size"),
         Param("allow_cache"),
         Param("sizes", per_item=True, narrow={"default": [4096, 65536, 1048576, 16777216, 268435456, 1073741824]}),
         THREADS, *REPEATED),
        argv_order=("op", "isa", "blocks", "buffer_bytes", "array_size", "allow_cache", "sizes", "threads", "repeats",
                    "duration_s", "warmup_s", *STABLE_ARGV, *BUSY_ARGV),
        unit="MB/s", units_by_op={"latency": "Mload/s"}, peak="memory", references=("stream", "likwid-bench")),
    Run("disk", "disk", (Param("ops", kernel_name="op", per_item=True), Param("blocks", per_item=True),
                         Param("direct"), Param("iodepth"), Param("file_size"), THREADS, *REPEATED),
        runner_params={"target": DISK_TARGET}, workdir_param="workdir",
        argv_order=("op", "blocks", "direct", "iodepth", "file_size", "workdir", "threads", "repeats", "duration_s",
                    "warmup_s", *STABLE_ARGV, *BUSY_ARGV),
        unit="MB/s", peak="disk", references=("fio", "iozone"), cpu_bound=False),
    Run("network", "net", (OPS, *NET_OPTIONS), fixed={"role": "loopback"},
        argv_order=("role", "op", "sizes", "streams", "poll", "repeats", "duration_s", "warmup_s", *STABLE_ARGV,
                    *BUSY_ARGV),
        unit="Mbit/s", units_by_op=NET_UNITS, peak="loopback", references=NET_TOOLS, cpu_bound=NET_BUSY),
    # Two hosts: the serving side serves on a free port of every address until its deadline (the server stops it
    # earlier: its lease gets 409 once the driving run ended); the driving side drives to it.
    Run("network_serve", "net", (Param("op"),),
        fixed={"role": "serve", "bind": "0.0.0.0", "port": 0},  # noqa: S104 - the driver is another host
        deadline_param="serve_s", argv_order=("role", "bind", "port", "op", "serve_s"),
        unit="Mbit/s", units_by_op=NET_UNITS),
    Run("network_drive", "net", (Param("peer", by_server=True), Param("port", by_server=True), Param("op"),
                                 *NET_OPTIONS),
        fixed={"role": "drive"},
        server_params={"server_run_id": {"type": "integer", "minimum": 1}, "reference_ports": REFERENCE_PORTS},
        check=_check_drive,
        argv_order=("role", "peer", "port", "op", "sizes", "streams", "poll", "repeats", "duration_s", "warmup_s",
                    *STABLE_ARGV, *BUSY_ARGV),
        unit="Mbit/s", units_by_op=NET_UNITS, peak="nic", references=NET_TOOLS, cpu_bound=NET_BUSY),
    Run("gpu", "gpu", (Param("ops", kernel_name="op", per_item=True), Param("device"), Param("bytes"), *REPEATED),
        argv_order=("op", "device", "bytes", "repeats", "duration_s", "warmup_s", *STABLE_ARGV, *BUSY_ARGV),
        unit="mixed", peak="gpu", cpu_bound=False, needs_gpu=True),
)}

EXPERIMENTS: dict[str, Experiment] = {e.kind: e for e in (
    Experiment("cpu", "CPU throughput", "FP64/FP32 FLOPS or integer ops at each thread count, repeated; best vector "
               "ISA with FMA.", (("host", "cpu"),), "cpu"),
    Experiment("cpu_trace", "CPU trace", "One thread count held for a duration, sampled every second (600 s = 600 "
               "samples).", (("host", "cpu_trace"),), "cpu_trace"),
    Experiment("memory", "Memory", "Bandwidth of block ops and STREAM-variant kernels; dependent-load latency against "
               "working-set size.", (("host", "memory"),), "memory"),
    Experiment("disk", "Disk", "Sequential/random read/write and mixed I/O over block sizes; buffered or direct; "
               "MB/s, IOPS and latency percentiles.", (("host", "disk"),), "disk"),
    Experiment("network", "Network (loopback)", "TCP/UDP throughput and round-trip latency over loopback on one host.",
               (("host", "network"),), "network"),
    Experiment("network_pair", "Network (two hosts)", "TCP/UDP throughput and round-trip latency between two hosts: "
               "the first host picked serves on a port it chooses, the second drives.",
               (("serve", "network_serve"), ("drive", "network_drive")), "network_drive", reference_per=None),
    Experiment("gpu", "GPU (CUDA)", "FP32/FP64 FMA FLOPS, integer ops, device memory bandwidth, host-device copies.",
               (("host", "gpu"),), "gpu", reference_per=None),
)}

# A list fans out into runs of one host each (a pair's serve and drive runs are one op).
assert all(sum(p.fan_out for p in r.params) <= 1 for r in RUNS.values())
assert all(e.run.fan_out is None for e in EXPERIMENTS.values() if e.hosts > 1)

# A run kind's role in its experiment ("host", "serve", "drive").
ROLE_OF: dict[str, str] = {kind: role for e in EXPERIMENTS.values() for role, kind in e.roles}


# A value that reaches argv: no option look-alikes, no list separators, nothing a human would not type.
_SAFE_TEXT = re.compile(r"[A-Za-z0-9_.:+/][A-Za-z0-9_.:+/-]*")


def format_arg(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, str):
        if not _SAFE_TEXT.fullmatch(value):
            raise ParamError(f"{name}: {value!r} has characters not allowed in a kernel argument")
        return value
    if isinstance(value, list) and value and all(not isinstance(v, list) for v in value):
        return ",".join(format_arg(name, v) for v in value)
    raise ParamError(f"{name}: {value!r} cannot be passed to the kernel")


def kernels_needed() -> list[str]:
    return sorted({r.kernel for r in RUNS.values()})
