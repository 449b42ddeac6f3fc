"""The report's first screen, computed once (the dashboard's report page and the downloaded HTML both show this):
what was measured (hosts, experiments, from when to when), each run's headline figure with its unit, the peak it is
set against, its efficiency, the reference tool beside it and its verdict, and what to look at first: runs
without a result, verdicts that are not valid, headline figures far below their peak or far from their reference
tool's. Nothing is recomputed: every figure is the stored result's (its headline, the headline's row)."""
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from hostbench_common.axes import coordinates, experiment_title
from pydantic import BaseModel, Field

from app.experiments.registry import ROLE_OF
from app.jobs.schemas import RunPublic
from app.results.schemas import ResultRow, RunResult
from app.results.verdict import CAUTION_ORDER, Verdict

# What to look at first: a headline below this share of its peak ...
PEAK_GAP = 0.5
# ... or whose ratio to a reference tool's figure (ours / theirs) is off by more than this factor either way.
REFERENCE_GAP = 1.25


class SummaryRun(BaseModel):
    run_id: int
    experiment: str = Field(description="the experiment in words: 'CPU throughput', 'Network (two hosts)'")
    host_name: str
    status: str
    headline: str = Field(description="the headline figure in words, or why there is none")
    value: float | None = None
    unit: str = ""
    where: str | None = Field(default=None, description="the headline row in words: 'FP64, 4 threads', 'tcp_stream, "
                                                "64 KiB messages, 1 stream'")
    peak: float | None = None
    peak_unit: str | None = None
    efficiency: float | None = None
    reference: str | None = Field(default=None, description="the first reference tool's figure beside the headline's")
    reference_ratio: float | None = None
    verdict: Verdict | None = None
    took_s: float | None = None
    ended_at: datetime | None = None


class Attention(BaseModel):
    """One thing to look at: a run, or the runs of one verdict together (the first one's reason given), so that
    the list stays short when many runs share a verdict."""

    run_ids: list[int]
    kind: Literal["no_result", "verdict", "peak_gap", "reference_gap"]
    verdict: Verdict | None = None
    text: str


class ReportSummary(BaseModel):
    hosts: list[str]
    experiments: list[str] = Field(description="each experiment in words with its run count: 'CPU throughput (2)'")
    started_at: datetime | None = Field(default=None, description="the first run's start")
    ended_at: datetime | None = Field(default=None, description="the last run's end")
    runs: list[SummaryRun]
    attention: list[Attention] = Field(description="what to look at first, the worst first")
    bounds: str = Field(description="what counts as a big gap, in words")


def _headline_row(run: RunPublic) -> ResultRow | None:
    res = run.result
    h = res.headline if res else None
    if res is None or h is None or h.value is None or h.threads is None:
        return None
    return next((r for r in res.rows if (r.op, r.threads, r.block_bytes) == (h.op, h.threads, h.block_bytes)), None)


def _reference(row: ResultRow) -> tuple[str | None, float | None]:
    ok = next((r for r in row.references if r.status == "ok" and r.value is not None), None)
    if ok is None:
        return None, None
    return f"{ok.tool} {ok.value:.4g} {ok.unit or ''}".strip(), ok.ratio


def first_reason(res: RunResult) -> str | None:
    """The first reason of the result's verdict, without the verdict's own word in front ("disturbed: CPU share
    0.23 ..." reads "CPU share 0.23 ..." after "disturbed")."""
    flags = list(res.flags) + [f for r in res.rows for f in r.flags] + (list(res.trace.flags) if res.trace else [])
    f = next((f for f in flags if f.kind == res.verdict), flags[0] if flags else None)
    if f is None:
        return None
    prefix = f"{f.kind.replace('_', ' ')}: "
    return f.text[len(prefix):] if f.text.lower().startswith(prefix.lower()) else f.text


def _by_verdict(items: list[tuple[Verdict, int, str, str | None]]) -> list[Attention]:
    """Runs of one verdict as one item, the worst verdict first: '3 runs disturbed: 4, 5, 6; run 4 (CPU throughput
    on vm): CPU share 0.23 ...'."""
    order = ["invalid", *CAUTION_ORDER]
    out = []
    for v in sorted({i[0] for i in items}, key=lambda v: order.index(v) if v in order else len(order)):
        group = [i for i in items if i[0] == v]
        _, first, where, reason = group[0]
        why = f"{where}: {reason}" if reason else where
        text = (f"{where} {v}" + (f": {reason}" if reason else "") if len(group) == 1 else
                f"{len(group)} runs {v}: {', '.join(str(i[1]) for i in group)}; {why}")
        out.append(Attention(run_ids=[i[1] for i in group], kind="verdict", verdict=v, text=text))
    return out


def summarise(runs: Sequence[RunPublic], hosts: list[str]) -> ReportSummary:
    out: list[SummaryRun] = []
    attention: list[Attention] = []
    judged: list[tuple[Verdict, int, str, str | None]] = []
    counts: dict[str, int] = {}
    for run in runs:
        title = experiment_title(run.experiment)
        counts[title] = counts.get(title, 0) + 1
        res = run.result
        took = ((run.finished_at - run.started_at).total_seconds()
                if run.finished_at is not None and run.started_at is not None else None)
        if res is None:
            if ROLE_OF.get(run.experiment) != "serve":  # a serving run has no figures of its own
                attention.append(Attention(run_ids=[run.id], kind="no_result",
                                           text=f"run {run.id} ({title} on {run.host_name}) {run.status}"
                                                + (f": {run.status_reason}" if run.status_reason else "")))
            out.append(SummaryRun(run_id=run.id, experiment=title, host_name=run.host_name, status=run.status,
                                  headline="no result" + (f": {run.status_reason}" if run.status_reason else ""),
                                  took_s=took, ended_at=run.finished_at))
            continue
        row = _headline_row(run)
        ref, ratio = _reference(row) if row is not None else (None, None)
        h = res.headline
        item = SummaryRun(
            run_id=run.id, experiment=title, host_name=run.host_name, status=run.status,
            headline=h.text if h is not None else "—", value=h.value if h is not None else None,
            unit=h.unit if h is not None else res.unit,
            where=coordinates(run.experiment, row.op, row.threads, row.block_bytes) if row is not None else None,
            peak=row.peak.value if row is not None and row.peak is not None else None,
            peak_unit=row.peak.unit if row is not None and row.peak is not None else None,
            efficiency=row.efficiency if row is not None else None, reference=ref, reference_ratio=ratio,
            verdict=res.verdict, took_s=took, ended_at=run.finished_at)
        out.append(item)
        where = f"run {run.id} ({title} on {run.host_name})"
        if res.verdict != "valid":
            judged.append((res.verdict, run.id, where, first_reason(res)))
        if item.efficiency is not None and item.efficiency < PEAK_GAP:
            attention.append(Attention(run_ids=[run.id], kind="peak_gap",
                                       text=f"{where}: {h.text if h else ''} is {item.efficiency * 100:.0f} % of its "
                                            f"peak {item.peak:.4g} {item.peak_unit or ''}".replace("  ", " ")))
        if ratio is not None and ratio > 0 and not 1 / REFERENCE_GAP <= ratio <= REFERENCE_GAP:
            attention.append(Attention(run_ids=[run.id], kind="reference_gap",
                                       text=f"{where}: ours / {ref} = {ratio:.2f}"))
    order = {"no_result": 0, "verdict": 1, "peak_gap": 2, "reference_gap": 3}
    attention = sorted(attention + _by_verdict(judged), key=lambda a: order[a.kind])
    return ReportSummary(
        hosts=hosts, experiments=[f"{t} ({n})" for t, n in counts.items()],
        started_at=min((r.started_at for r in runs if r.started_at is not None), default=None),
        ended_at=max((r.finished_at for r in runs if r.finished_at is not None), default=None),
        runs=out, attention=attention,
        bounds=f"a headline below {PEAK_GAP * 100:.0f} % of its peak, or off its reference tool's figure by more "
               f"than a factor {REFERENCE_GAP:g} either way")
