"""What a result row's coordinates are, in a person's words, declared once: its `threads` (worker threads; a network
kernel's streams, each its own thread with its own connection: `streams` feeds `threads`) and its `block_bytes` (a
memory or disk block, a TCP message, a UDP datagram, the memory latency's working set per thread).

The API publishes them with each experiment (GET /api/experiments: `axes`, `axes_by_op`), which the dashboard's
result tables, charts and Trends read; the downloaded HTML report and the trend events read them from here.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from .experiments import EXPERIMENTS, RUNS


@dataclass(frozen=True)
class Axes:
    count: str = "thread"  # one of `threads`: "1 thread"
    counts: str = "threads"  # more than one, and the axis title: "4 threads", "Threads"
    size: str = "block size"  # the axis title of `block_bytes`
    sized: str = "blocks"  # after a size: "8 KiB blocks"

    def public(self) -> dict[str, str]:
        return asdict(self)


DEFAULT = Axes()
_TCP = Axes("stream", "streams", "message size", "messages")
_UDP = Axes("stream", "streams", "datagram size", "datagrams")
# By kernel, then by op where an op of the kernel reads otherwise.
BY_KERNEL: dict[str, Axes] = {"net": _TCP}
BY_OP: dict[str, dict[str, Axes]] = {
    "net": {"udp_stream": _UDP, "udp_rr": _UDP},
    "memory": {"latency": Axes(size="working set per thread", sized="working set")},
}


def axes(kernel: str | None, op: str | None = None) -> Axes:
    """The words of a kernel's rows (of one op)."""
    by_op = BY_OP.get(kernel or "", {})
    return by_op.get(op or "", BY_KERNEL.get(kernel or "", DEFAULT))


def count_words(a: Axes, n: int) -> str:
    """4 → "4 threads", 1 → "1 stream"."""
    return f"{n} {a.count if n == 1 else a.counts}"


def size_words(b: int) -> str:
    """8192 → '8 KiB', 8000 → '8000 B': exact, a binary unit only where it divides."""
    for unit, n in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= n and b % n == 0:
            return f"{b // n} {unit}"
    return f"{b} B"


def experiment_title(run_kind: str) -> str:
    """A run kind's experiment in words: 'cpu' → 'CPU throughput', 'network_drive' → 'Network (two hosts)'."""
    for e in EXPERIMENTS.values():
        for role, kind in e.roles:
            if kind == run_kind:
                return e.title if role in ("host", "drive") else f"{e.title}, serving"
    return run_kind


def coordinates(run_kind: str, op: str | None, threads: int, block_bytes: int | None) -> str:
    """A row's coordinates in its kernel's words: 'tcp_stream, 64 KiB messages, 1 stream', 'fp64, 8 threads'."""
    run = RUNS.get(run_kind)
    a = axes(run.kernel if run else None, op)
    parts = [op] if op else []
    if block_bytes is not None:
        parts.append(f"{size_words(block_bytes)} {a.sized}")
    parts.append(count_words(a, threads))
    return ", ".join(parts)
