"""The one table that maps an experiment kind to a kernel and its argv.

Adding an experiment (memory, disk, network, gpu) = adding one entry to EXPERIMENTS. The API
parameters of an experiment are checked against a schema derived from the kernel's own
`--describe` output, then turned into kernel parameters, which are checked once more against the
kernel schema itself (its bounds and its cross-field rules, "x-rules") before the argv is built.
"""

from __future__ import annotations

import copy
import ipaddress
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ParamError
from .params import validate

# Parameters the runner itself acts on, for every experiment; never passed to a kernel.
# reference: after the kernel succeeded, run the matched reference tools too (reference.py).
RUNNER_PARAMS: dict[str, dict[str, Any]] = {"reference": {"type": "boolean"}}


@dataclass(frozen=True)
class Param:
    """One API parameter of an experiment and the kernel parameter it feeds."""

    name: str
    kernel_name: str | None = None  # defaults to name
    one_of_list: bool = False  # the API takes one value; the kernel takes a list of exactly it

    @property
    def target(self) -> str:
        return self.kernel_name or self.name


@dataclass(frozen=True)
class Experiment:
    kind: str
    kernel: str
    params: tuple[Param, ...]  # what the user may set
    fixed: Mapping[str, Any] = field(default_factory=dict)  # kernel params the experiment pins
    defaults: Mapping[str, Any] = field(default_factory=dict)  # overrides of kernel defaults
    argv_order: tuple[str, ...] = ()  # kernel params in argv order; every one is passed unless `omit` drops it
    # Kernel params that do not apply to this job's other params (memory: `sizes` only for the latency op).
    omit: Callable[[Mapping[str, Any]], frozenset[str]] | None = None
    # A kernel param the runner fills from the assignment's deadline_s (serve: --serve_s), never from params.
    deadline_param: str | None = None
    # Params the server adds for itself (network_drive: server_run_id); accepted, never passed to the kernel.
    server_params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # A last check of the validated params, beyond the kernel's schema (network_drive: peer is an IP literal).
    check: Callable[[Mapping[str, Any]], None] | None = None

    def api_schema(self, kernel_schema: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON Schema of this experiment's API params, derived from the kernel's schema."""
        props = kernel_schema.get("properties", {})
        out: dict[str, Any] = {}
        for p in self.params:
            if p.target not in props:
                raise ParamError(
                    f"kernel {self.kernel!r} has no parameter {p.target!r} (is the kernel binary up to date?)"
                )
            sub = copy.deepcopy(props[p.target])
            if p.one_of_list:
                if sub.get("type") != "array" or "items" not in sub:
                    raise ParamError(f"kernel parameter {p.target!r} is not a list")
                sub = copy.deepcopy(sub["items"])
            sub.pop("default", None)
            out[p.name] = sub
        out.update(copy.deepcopy(RUNNER_PARAMS))
        out.update(copy.deepcopy(dict(self.server_params)))
        return {"type": "object", "additionalProperties": False, "properties": out}

    @staticmethod
    def wants_reference(params: Mapping[str, Any]) -> bool:
        """Only after kernel_params() accepted params (the flag is then a bool or absent)."""
        return params.get("reference") is True

    def kernel_params(self, params: Mapping[str, Any], kernel_schema: Mapping[str, Any],
                      deadline_s: float | None = None) -> dict[str, Any]:
        """Validate API params, then return the complete kernel parameters (validated too)."""
        if not isinstance(params, dict):
            raise ParamError(f"params: expected object, got {type(params).__name__}")
        validate(params, self.api_schema(kernel_schema))
        if self.check is not None:
            self.check(params)
        props = kernel_schema.get("properties", {})
        out: dict[str, Any] = {}
        dropped = self.omit(params) if self.omit else frozenset()
        if not params.get("stable_cv"):  # fixed repeats: the kernel's defaults, argv stays short
            dropped |= frozenset(STABLE_ARGV)
        for name in self.argv_order:
            if name in dropped:
                continue
            if name in self.fixed:
                out[name] = self.fixed[name]
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
                out[name] = [params[p.name]] if p.one_of_list else params[p.name]
            elif name in self.defaults:
                out[name] = self.defaults[name]
            elif name in props and props[name].get("default") is not None:
                out[name] = copy.deepcopy(props[name]["default"])
            else:
                raise ParamError(f"{p.name if p else name}: required (the kernel has no default)")
        validate(out, kernel_schema)
        return out

    def argv(self, kernel_bin: Path | str, kernel_params: Mapping[str, Any]) -> list[str]:
        argv = [str(kernel_bin), self.kernel]
        for name in self.argv_order:
            if name in kernel_params:
                argv += [f"--{name}", format_arg(name, kernel_params[name])]
        return argv


def _check_drive(params: Mapping[str, Any]) -> None:
    """The peer is the serving host's address as the server recorded it: an IP literal, never a name."""
    peer, port = params.get("peer"), params.get("port")
    try:
        ipaddress.ip_address(peer if isinstance(peer, str) else "")
    except ValueError:
        raise ParamError(f"peer: {peer!r} is not an IPv4 or IPv6 address literal") from None
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise ParamError(f"port: {port!r} is not a port (1..65535)")


# network_drive: the ports of the reference servers its peer offers (reference_serve.py), added by the server.
REFERENCE_PORTS: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "properties": {tool: {"type": "integer", "minimum": 1, "maximum": 65535} for tool in ("iperf3", "sockperf")},
}

# Repeat until stable (harness params of every kernel).
STABLE = (Param("stable_cv"), Param("max_repeats"))
STABLE_ARGV = ("stable_cv", "max_repeats")

EXPERIMENTS: dict[str, Experiment] = {
    "cpu": Experiment(
        kind="cpu",
        kernel="cpu",
        params=(Param("op"), Param("threads"), Param("repeats"), Param("duration_s"), Param("warmup_s"), *STABLE),
        argv_order=("op", "threads", "repeats", "duration_s", "warmup_s", "stable_cv", "max_repeats"),
    ),
    "cpu_trace": Experiment(
        kind="cpu_trace",
        kernel="cpu",
        params=(Param("op"), Param("threads", one_of_list=True), Param("duration_s")),
        fixed={"repeats": 1, "warmup_s": 0},
        defaults={"duration_s": 600},
        argv_order=("op", "threads", "repeats", "duration_s", "warmup_s"),
    ),
    # The kernel's working directory is the run's own directory under the runner's work dir; `workdir` is
    # never a job parameter (a path from a request), the disk kernel's default "." is that directory.
    "memory": Experiment(
        kind="memory",
        kernel="memory",
        params=(Param("op"), Param("blocks"), Param("sizes"), Param("threads"), Param("repeats"),
                Param("duration_s"), Param("warmup_s"), *STABLE),
        argv_order=("op", "blocks", "sizes", "threads", "repeats", "duration_s", "warmup_s", *STABLE_ARGV),
        omit=lambda p: frozenset({"blocks"} if p.get("op") == "latency" else
                                 {"blocks", "sizes"} if str(p.get("op", "")).startswith("stream_") else {"sizes"}),
    ),
    "disk": Experiment(
        kind="disk",
        kernel="disk",
        params=(Param("ops", kernel_name="op"), Param("blocks"), Param("direct"), Param("iodepth"),
                Param("file_size"), Param("threads"), Param("repeats"), Param("duration_s"), Param("warmup_s"),
                *STABLE),
        argv_order=("op", "blocks", "direct", "iodepth", "file_size", "threads", "repeats", "duration_s",
                    "warmup_s", *STABLE_ARGV),
    ),
    "network": Experiment(
        kind="network",
        kernel="net",
        params=(Param("op"), Param("sizes"), Param("streams"), Param("poll"), Param("repeats"),
                Param("duration_s"), Param("warmup_s"), *STABLE),
        fixed={"role": "loopback"},
        argv_order=("role", "op", "sizes", "streams", "poll", "repeats", "duration_s", "warmup_s", *STABLE_ARGV),
    ),
    # Two-host network jobs: the server side serves on a free port of every address until its deadline (the
    # server stops it earlier: its lease gets 409 once the driving run ended); the client drives to it.
    "network_serve": Experiment(
        kind="network_serve",
        kernel="net",
        params=(Param("op"),),
        fixed={"role": "serve", "bind": "0.0.0.0", "port": 0},  # noqa: S104 - the driver is another host
        deadline_param="serve_s",
        argv_order=("role", "bind", "port", "op", "serve_s"),
    ),
    "network_drive": Experiment(
        kind="network_drive",
        kernel="net",
        params=(Param("peer"), Param("port"), Param("op"), Param("sizes"), Param("streams"), Param("poll"),
                Param("repeats"), Param("duration_s"), Param("warmup_s"), *STABLE),
        fixed={"role": "drive"},
        server_params={"server_run_id": {"type": "integer", "minimum": 1}, "reference_ports": REFERENCE_PORTS},
        check=_check_drive,
        argv_order=("role", "peer", "port", "op", "sizes", "streams", "poll", "repeats", "duration_s", "warmup_s",
                    *STABLE_ARGV),
    ),
    "gpu": Experiment(
        kind="gpu",
        kernel="gpu",
        params=(Param("ops", kernel_name="op"), Param("device"), Param("bytes"), Param("repeats"),
                Param("duration_s"), Param("warmup_s"), *STABLE),
        argv_order=("op", "device", "bytes", "repeats", "duration_s", "warmup_s", *STABLE_ARGV),
    ),
}

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
    return sorted({e.kernel for e in EXPERIMENTS.values()})
