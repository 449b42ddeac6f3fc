"""Shared pieces of every bench area: running a command (argv, never a shell), interleaving, the report."""
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hostbench_common.reftools import ParseError
from hostbench_stack import ROOT

HBK = ROOT / "runner" / "kernels" / "build" / "hbk"


class ToolMissing(Exception):
    pass


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ToolMissing(f"{name} is not installed on this host (bench installs nothing)")
    return path


def resolve(argv: list[str], *names: str) -> list[str]:
    """A shared builder's argv (hostbench_common.reftools) with argv[0] and every word among `names` resolved on
    PATH; ToolMissing names the first that is not installed."""
    paths = {name: tool(name) for name in (argv[0], *names)}
    return [paths.get(word, word) for word in argv]


def parsed(parser: Callable[[str], list[dict]], text: str, what: str) -> list[dict]:
    """A shared parser's metrics; an output it refuses is this bench's RuntimeError, with the reason."""
    try:
        return parser(text)
    except ParseError as exc:
        raise RuntimeError(f"cannot read {what}'s output: {exc}: {text[-400:]}") from None


def figure(metrics: list[dict], name: str, what: str, **keys: object) -> float:
    """The value of the first metric called `name` (with these keys), or RuntimeError."""
    for m in metrics:
        if m.get("name") == name and all(m.get(k) == v for k, v in keys.items()):
            return float(m["value"])
    raise RuntimeError(f"{what} reported no {name}{f' {keys}' if keys else ''}")


def exit_on_sigterm() -> None:
    """SIGTERM ends the bench as Ctrl-C does: by an exception, so `run` takes its tools' process groups down
    (mpirun and its hpcc ranks, fio's workers) instead of leaving them running."""
    def on_term(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)


def _end_group(proc: subprocess.Popen) -> None:
    """Stop a tool and everything it started (its own session: one process group)."""
    for sig, wait_s in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait_s)
            # the leader is gone; its children (mpirun's ranks) may not be: the group gets the signal still
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            break
        except subprocess.TimeoutExpired:
            continue
        break


def run(argv: list[str], timeout: float = 600, env: dict | None = None, cwd: Path | None = None) -> str:
    """Run a tool (argv, never a shell) in its own session; on a timeout, Ctrl-C or SIGTERM (see
    `exit_on_sigterm`) the whole process group is stopped, not only its first process."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            text=True, env=env, cwd=cwd, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        _end_group(proc)
        proc.communicate()
        raise
    if proc.returncode != 0:
        raise RuntimeError(f"{Path(argv[0]).name} exited {proc.returncode}: {(err or out)[-800:]}")
    return out


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
    skipped: list[str] = field(default_factory=list)  # comparisons that cannot run on this host, with the reason
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
        for m in self.skipped:
            print(f"skipped: {m}")
        for n in self.notes:
            print(f"note: {n}")
        # the JSON line is the last line even where stdout and stderr share one stream: both are flushed first
        sys.stderr.flush()
        sys.stdout.flush()
        print(json.dumps({
            "area": self.area,
            "pairs": [{"metric": p.metric, "unit": p.unit, "ours": p.ours, "theirs": p.theirs,
                       "ratio": round(p.ratio, 4), "reference": p.reference} for p in self.pairs],
            "ratios": self.ratios(),
            "missing": self.missing,
            "skipped": self.skipped,
        }), flush=True)


def progress(pair: Pair, extra: str = "") -> None:
    """Each pair on stderr as it is measured: a long bench shows where it is, and an interrupted one
    leaves what it measured."""
    print(f"[bench] {pair.metric}: ours {pair.ours:.4g} {pair.unit}, reference {pair.theirs:.4g}, "
          f"ratio {pair.ratio:.3f}{'; ' + extra if extra else ''}", file=sys.stderr, flush=True)


def interleave(report: BenchReport, metric: str, unit: str, reference: str, ours: Callable[[], float],
               theirs: Callable[[], float], pairs: int) -> None:
    """A B, B A, A B, ...: the two alternate, and which goes first alternates too, so that drift (thermal,
    noisy neighbours, what the previous run left behind) hits both alike."""
    for i in range(pairs):
        if i % 2 == 0:
            a = ours()
            b = theirs()
        else:
            b = theirs()
            a = ours()
        report.pairs.append(Pair(metric, unit, a, b, reference))
        progress(report.pairs[-1])


def cpu_share_of_child(argv: list[str], threads: int, env: dict | None = None,
                       timeout: float = 600, cwd: Path | None = None) -> tuple[str, float]:
    """Runs a reference tool; returns its stdout and its CPU time / (wall time x threads)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    out = run(argv, env=env, timeout=timeout, cwd=cwd)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, cpu / (wall * threads) if wall > 0 else 0.0


def interleave_quiet(report: BenchReport, metric: str, unit: str, reference: str,
                     a: Callable[[], tuple[float, float]], b: Callable[[], tuple[float, float]], pairs: int,
                     quiet: float, swap: bool = True) -> None:
    """A B, B A, ... like interleave, each side also giving its cpu_share (the CPU time its threads got
    over wall time x threads). A pair in which either side got less than `quiet` was disturbed by other
    processes and is measured again, up to 2 x pairs attempts; if too few quiet pairs came, the least
    disturbed ones are kept and a note says so. Every attempt is listed in the notes. swap False: always
    A then B (when B is computed from what A just measured, as a peak from A's clock)."""
    got: list[tuple[float, Pair]] = []
    for i in range(2 * pairs):
        if i % 2 == 0 or not swap:
            (ours_v, ours_share), (theirs_v, theirs_share) = a(), b()
        else:
            (theirs_v, theirs_share), (ours_v, ours_share) = b(), a()
        got.append((min(ours_share, theirs_share), Pair(metric, unit, ours_v, theirs_v, reference)))
        progress(got[-1][1], f"cpu_share ours {ours_share:.3f}, reference {theirs_share:.3f}")
        if sum(share >= quiet for share, _ in got) >= pairs:
            break
    good = [p for share, p in got if share >= quiet]
    kept = good[:pairs] if len(good) >= pairs else [p for _, p in sorted(got, key=lambda g: -g[0])[:pairs]]
    report.pairs.extend(kept)
    if len(good) < pairs:
        worst = min(share for share, p in got if p in kept)
        report.notes.append(f"{metric}: {len(good)} of {len(got)} pairs undisturbed; kept the {pairs} least "
                            f"disturbed (lowest cpu_share of either side {worst:.2f})")
    elif len(got) > pairs:
        dropped = [f"{p.ours:.4g}/{p.theirs:.4g} (share {share:.2f})" for share, p in got if share < quiet]
        report.notes.append(f"{metric}: {len(dropped)} disturbed pair(s) measured again: {', '.join(dropped)}")


def sampler_ab_pairs(report: BenchReport, metric: str, unit: str, kernel: str, args: list[str],
                     pairs_per_process: int, processes: int = 2, duration_s: float = 2.0) -> None:
    """What the per-second sampler costs, measured inside one process: `hbk KERNEL ARGS --sampler_ab true`
    runs its measured phases in pairs, one sampled once a second (as the product runs) and one not, the
    order swapped every other pair; each pair is a Pair (ours = with the sampler, theirs = without).
    Separate processes would not do on a shared host: the host's boost (3.69 to 3.90 GHz between runs on
    one VM) and its memory bandwidth (60 or 105 GB/s) move between processes by more than the 1 % measured."""
    for _ in range(processes):
        events = hbk_events(kernel, [*args, "--repeats", str(2 * pairs_per_process), "--duration_s", str(duration_s),
                                     "--warmup_s", "1", "--sampler_ab", "true"], timeout=1800)
        res = results(events)
        if len(res) != 2 * pairs_per_process or not all(r["verified"] for r in res):
            raise RuntimeError(f"hbk {kernel} --sampler_ab: expected {2 * pairs_per_process} verified results")
        for first, second in zip(res[::2], res[1::2], strict=True):  # even length: checked above
            on, off = (first, second) if first.get("sampler") else (second, first)
            if on.get("sampler") is not True or off.get("sampler") is not False:
                raise RuntimeError(f"hbk {kernel} --sampler_ab: a pair without one phase of each kind")
            pair = Pair(metric, unit, on["value"], off["value"],
                        "the same process's phase without the sampler "
                        f"(--sampler_ab: {duration_s:g}-s phases in pairs)")
            report.pairs.append(pair)
            progress(pair, f"cpu_share with {on['cpu_share']:.3f}, without {off['cpu_share']:.3f}")
