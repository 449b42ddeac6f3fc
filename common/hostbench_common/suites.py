"""Suites: named lists of jobs, declared once here in the experiment table's terms (experiments.py). A suite is a
title and a list of items; an item is one job body without its hosts: an experiment and its params (an op list
fans out into one run per op, as any job's does). Which hosts an item runs on follows from the hosts picked
(`plan`): a one-host item on every one of them; a two-host item (network_pair) only when two or more are picked,
host 1 serving and host 2 driving, or, with a peer named, from every host picked to the peer; a GPU item
(`needs="gpu"`) only on hosts whose inventory lists a GPU
(`inventory["gpus"]`, a non-empty list), skipped when none does. The expected duration of a suite is the sum of
its jobs' expected durations (Experiment.expected_duration + reference_allowance). A test holds every item to the
API's job body."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .experiments import EXPERIMENTS
from .hostfit import gpus

NEEDS = ("gpu",)  # what an item may need of a host, beyond the experiment's own roles


@dataclass(frozen=True)
class Item:
    experiment: str
    params: Mapping[str, Any] = field(default_factory=dict)
    needs: str | None = None  # "gpu": only on hosts that have one


@dataclass(frozen=True)
class Suite:
    id: str
    title: str
    description: str
    items: tuple[Item, ...]


@dataclass(frozen=True)
class HostInfo:
    id: int
    inventory: Mapping[str, Any] | None = None

    @property
    def has_gpu(self) -> bool:
        return bool(gpus(self.inventory))


@dataclass(frozen=True)
class PlannedJob:
    experiment: str
    host_ids: list[int]
    params: dict[str, Any]


def plan(items: Sequence[Item], hosts: Sequence[HostInfo],
         peer: HostInfo | None = None) -> tuple[list[PlannedJob], list[str]]:
    """The jobs a suite makes on these hosts (in item order), and why each item left out was left out.

    With a `peer`, the peer takes part in the two-host items only: it serves, and every host picked drives to it
    (one job per host picked), so that each host's network is measured against the same machine and the peer's
    CPU, memory and disk are left alone. Without one, a two-host item runs between the first two hosts picked."""
    if peer is not None and any(h.id == peer.id for h in hosts):
        raise ValueError(f"host {peer.id} is picked and is the peer too")
    jobs: list[PlannedJob] = []
    skipped: list[str] = []
    for i, item in enumerate(items):
        e = EXPERIMENTS[item.experiment]
        on = [h for h in hosts if item.needs != "gpu" or h.has_gpu]
        if e.hosts == 2 and peer is not None and on:
            jobs.extend(PlannedJob(item.experiment, [peer.id, h.id], dict(item.params)) for h in on)
            continue
        if e.hosts > len(on):
            why = "no host with a GPU in its inventory" if item.needs == "gpu" and hosts else \
                f"it needs {e.hosts} hosts, {len(on)} picked"
            skipped.append(f"items[{i}] ({e.title}): {why}")
            continue
        ids = [h.id for h in on][: e.hosts] if e.hosts > 1 else [h.id for h in on]
        jobs.append(PlannedJob(item.experiment, ids, dict(item.params)))
    return jobs, skipped


def job_duration(experiment: str, params: Mapping[str, Any]) -> float:
    """One job's expected seconds (on each of its hosts): measuring at most plus the reference tools' allowance."""
    e = EXPERIMENTS[experiment]
    return e.expected_duration(params) + e.reference_allowance(params)


def expected_duration(jobs: Sequence[PlannedJob], resolve: Any = None) -> float:
    """A suite's expected seconds: the sum of its jobs' (`resolve` may turn params into the API's, defaults filled)."""
    return sum(job_duration(j.experiment, resolve(j) if resolve else j.params) for j in jobs)


# Busy hosts: every repeated item waits up to 5 s for a quiet CPU before each measured phase and measures a
# disturbed phase up to twice more (the harness's quiet_wait_s and disturbed_retries; docs/methodology/verdicts.md).
BUSY_EACH = {"quiet_wait_s": 5, "disturbed_retries": 2}
# quick: about a minute a host (a fleet check measures the hosts of one machine in turn, so its time is the sum):
# two 1-s repeats after half a second of warm-up: a check FAILs a figure only when both are past its band (app.checks:
# one slow second of a noisy figure, a disk's write on a shared device, failed undisturbed hosts with one 2-s phase),
# and each phase waits at most 1 s for a quiet CPU (a wait in proportion: at 5 s, a busy host's phases took 80-90 s
# instead of 45); the CPU share still tells a disturbed phase, which is measured again
QUICK_EACH = {"repeats": 2, "duration_s": 1, "warmup_s": 0.5, **BUSY_EACH, "quiet_wait_s": 1}
FULL_EACH = {"reference": True, **BUSY_EACH}
STANDARD_EACH = {"repeats": 3, "duration_s": 5, "warmup_s": 1, **BUSY_EACH}
BURN_EACH = {"repeats": 3, "duration_s": 10, "warmup_s": 2, **BUSY_EACH}
THREADS = [1, 2, 4, 8]
# Disk items measure the device: O_DIRECT (the kernel's default, stated here so that a suite never measures the
# page cache); every block a suite uses is a multiple of 4096, so every row runs direct (io_mode "direct").
DEVICE = {"direct": True}
NET_SIZES = {"tcp": [1, 1024, 65536], "udp": [1, 1024, 65507]}  # one UDP datagram carries at most 65507 B

BUILTIN: dict[str, Suite] = {s.id: s for s in (
    Suite("quick", "Quick health check",
          "About a minute on one host: a short CPU, memory, disk and loopback network measurement each.",
          (Item("cpu", {"op": ["fp64", "int32"], "threads": [1, 2], **QUICK_EACH}),
           Item("memory", {"op": ["copy", "stream_triad", "latency"], "blocks": [8388608], "sizes": [4096, 268435456],
                           "threads": [1], **QUICK_EACH}),
           Item("disk", {"ops": ["seq_read", "rand_read", "seq_write"], "blocks": [4096, 1048576], "threads": [1],
                         "file_size": 268435456, **DEVICE, **QUICK_EACH}),
           Item("network", {"op": ["tcp_stream", "tcp_rr"], "sizes": [65536], **QUICK_EACH}))),
    Suite("standard", "Standard health check",
          "About ten minutes on one host: CPU FP64/FP32/INT at 1 and 2 threads, a 2-minute CPU trace, memory copy, "
          "triad and latency from cache to DRAM, disk sequential and random at 4 KiB and 1 MiB, TCP on loopback; "
          "three repeats each.",
          (Item("cpu", {"op": ["fp64", "fp32", "int32"], "threads": [1, 2], **STANDARD_EACH}),
           Item("cpu_trace", {"op": "fp64", "duration_s": 120}),
           Item("memory", {"op": ["copy", "stream_triad", "latency"], "blocks": [8388608, 83886080],
                           "sizes": [4096, 268435456], "threads": [1, 2], **STANDARD_EACH}),
           Item("disk", {"ops": ["seq_read", "rand_read", "seq_write", "rand_write"], "blocks": [4096, 1048576],
                         "threads": [1], "file_size": 536870912, **DEVICE, **STANDARD_EACH}),
           Item("network", {"op": ["tcp_stream", "tcp_rr"], "sizes": [1024, 65536], **STANDARD_EACH}))),
    Suite("burn-in", "Burn-in",
          "About an hour on one host: a 40-minute CPU trace (throttling and lost CPU show in it), then the standard "
          "check's CPU, memory and disk items with longer phases.",
          (Item("cpu_trace", {"op": "fp64", "duration_s": 2400}),
           Item("cpu", {"op": ["fp64", "fp32", "int32"], "threads": [1, 2, 4], **BURN_EACH}),
           Item("memory", {"op": ["copy", "stream_triad", "latency"], "blocks": [8388608, 83886080],
                           "sizes": [4096, 268435456], "threads": [1, 2], **BURN_EACH}),
           Item("disk", {"ops": ["seq_read", "rand_read", "seq_write", "rand_write"], "blocks": [4096, 1048576],
                         "threads": [1, 4], "file_size": 1073741824, **DEVICE, **BURN_EACH}),
           Item("network", {"op": ["tcp_stream", "tcp_rr"], "sizes": [1024, 65536], **BURN_EACH}))),
    Suite("full", "Full system report",
          "Every experiment of the course report: CPU FP64/FP32/INT at 1/2/4/8 threads, the 600-sample trace, "
          "memory's ops over 8 B / 8 KB / 8 MB / 80 MB blocks, disk ops x block sizes, TCP/UDP x 1 B / 1 KB / 64 KB "
          "on loopback and (two hosts picked) from the second host to the first, GPU where a host has one; "
          "reference tools on (ping with the network ones).",
          (Item("cpu", {"op": ["fp64", "fp32", "int32"], "threads": THREADS, **FULL_EACH}),
           Item("cpu_trace", {"op": "fp64", "duration_s": 600}),
           Item("memory", {"op": ["copy", "read", "write", "rand_read", "rand_write", "stream_copy", "stream_scale",
                                  "stream_add", "stream_triad", "latency"],
                           "blocks": [8, 8192, 8388608, 83886080], "threads": THREADS, **FULL_EACH}),
           Item("disk", {"ops": ["rw", "seq_read", "seq_write", "rand_read", "rand_write"],
                         "blocks": [4096, 65536, 1048576, 8388608], "threads": THREADS, **DEVICE, **FULL_EACH}),
           Item("network", {"op": ["tcp_stream", "tcp_rr"], "sizes": NET_SIZES["tcp"], **FULL_EACH}),
           Item("network", {"op": ["udp_stream", "udp_rr"], "sizes": NET_SIZES["udp"], **FULL_EACH}),
           *(Item("network_pair", {"op": op, "sizes": NET_SIZES[op[:3]], **FULL_EACH})
             for op in ("tcp_stream", "tcp_rr", "udp_stream", "udp_rr")),
           Item("gpu", {}, needs="gpu"))),
)}
