"""Shared pieces of every bench area: running a command (argv, never a shell), interleaving, the report."""
import json
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hostbench_cli import ROOT

HBK = ROOT / "runner" / "kernels" / "build" / "hbk"


class ToolMissing(Exception):
    pass


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ToolMissing(f"{name} is not installed on this host (bench installs nothing)")
    return path


def run(argv: list[str], timeout: float = 600, env: dict | None = None) -> str:
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"{Path(argv[0]).name} exited {r.returncode}: {(r.stderr or r.stdout)[-800:]}")
    return r.stdout


def hbk_events(kernel: str, args: list[str], timeout: float = 600) -> list[dict]:
    """Run our kernel; return its JSON events. An error or untrusted end raises."""
    out = run([str(HBK), kernel, *args], timeout=timeout)
    events = [json.loads(line) for line in out.splitlines() if line.strip()]
    end = events[-1] if events else {}
    if end.get("type") != "end" or end.get("status") != "ok":
        raise RuntimeError(f"hbk {kernel} did not end ok: {end}")
    return events


def results(events: list[dict]) -> list[dict]:
    return [e for e in events if e.get("type") == "result"]


@dataclass
class Pair:
    metric: str
    unit: str
    ours: float
    theirs: float
    reference: str  # the tool and its parameters, e.g. "fio --bs=1M --iodepth=16 --direct=1"

    @property
    def ratio(self) -> float:
        return self.ours / self.theirs if self.theirs else float("nan")


@dataclass
class BenchReport:
    area: str
    pairs: list[Pair] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def ratios(self) -> dict[str, float]:
        by: dict[str, list[float]] = {}
        for p in self.pairs:
            by.setdefault(p.metric, []).append(p.ratio)
        return {m: round(statistics.median(v), 4) for m, v in by.items()}

    def print(self) -> None:
        w = max([len(p.metric) for p in self.pairs] + [6])
        print(f"hostbench bench {self.area}: ours vs reference, interleaved pairs")
        print(f"{'metric':<{w}}  {'pair':>4}  {'ours':>12}  {'reference':>12}  {'ratio':>7}  unit / reference")
        counts: dict[str, int] = {}
        for p in self.pairs:
            counts[p.metric] = counts.get(p.metric, 0) + 1
            print(f"{p.metric:<{w}}  {counts[p.metric]:>4}  {p.ours:>12.4g}  {p.theirs:>12.4g}  {p.ratio:>7.3f}  "
                  f"{p.unit} / {p.reference}")
        for metric, r in self.ratios().items():
            print(f"median ratio {metric}: {r:.3f}")
        for m in self.missing:
            print(f"missing: {m}")
        for n in self.notes:
            print(f"note: {n}")
        sys.stdout.flush()
        print(json.dumps({
            "area": self.area,
            "pairs": [{"metric": p.metric, "unit": p.unit, "ours": p.ours, "theirs": p.theirs,
                       "ratio": round(p.ratio, 4), "reference": p.reference} for p in self.pairs],
            "ratios": self.ratios(),
            "missing": self.missing,
        }), flush=True)


def interleave(report: BenchReport, metric: str, unit: str, reference: str, ours: Callable[[], float],
               theirs: Callable[[], float], pairs: int) -> None:
    """A B A B ...: the two alternate so that drift (thermal, noisy neighbours) hits both alike."""
    for _ in range(pairs):
        a = ours()
        b = theirs()
        report.pairs.append(Pair(metric, unit, a, b, reference))
