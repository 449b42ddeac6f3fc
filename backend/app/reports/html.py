"""The report as one self-contained HTML file, rendered here on the server: styles inline, charts as inline SVG,
the report's JSON embedded as data (no script runs, nothing is fetched). Every figure is the report's (service.py):
a number is formatted here, never recomputed."""
import base64
import hashlib
import html
import json
import math
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, get_args

from hostbench_common.axes import Axes, axes, experiment_title, size_words

from app.experiments.registry import RUNS
from app.reports import svg
from app.reports.schemas import Report, ReportRun
from app.reports.summary import ReportSummary
from app.results.schemas import ResultRow, StrongScaling
from app.results.verdict import Verdict

# Every verdict of results.verdict, in words: a caution says so.
VERDICT_WORDS = {v: v if v in ("valid", "invalid") else f"caution: {v.replace('cpu_', 'CPU ').replace('_', ' ')}"
                 for v in get_args(Verdict)}


def e(x: object) -> str:
    return html.escape(str(x), quote=True)


def fmt(v: float | None) -> str:
    """Four significant digits, plain notation: 51.00, 1234, 0.001234; '—' for none."""
    if v is None or not math.isfinite(v):
        return "—"
    if v == 0:
        return "0"
    d = max(0, min(6, 3 - math.floor(math.log10(abs(v)))))
    return f"{v:.{d}f}"


def pct(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:.1f} %"


def block(b: int | None) -> str:
    return "—" if b is None else size_words(b)


def when(t: datetime | None) -> str:
    """A time as people read it: "2026-11-29 03:01:05 UTC" (to the second, the zone named), '—' for none."""
    if t is None:
        return "—"
    if t.tzinfo is not None:
        t = t.astimezone(UTC)
    return t.strftime("%Y-%m-%d %H:%M:%S") + " UTC"


def mean_sd(row: ResultRow) -> str:
    """"47.67 ± 0.12 GFLOP/s"; one repeat has no spread: "47.67 GFLOP/s (one repeat)", never "± 0.00"."""
    if row.n <= 1:
        return f"{fmt(row.mean)} {row.unit} (one repeat)"
    return f"{fmt(row.mean)} ± {fmt(row.stddev)} {row.unit}"


def ci(row: ResultRow) -> str:
    if row.ci95_low is not None and row.ci95_high is not None:
        return f"{fmt(row.ci95_low)} – {fmt(row.ci95_high)} {row.unit}"
    return "— (one repeat)" if row.n <= 1 else "— (spread too wide: the interval would reach below zero)"


def peak_text(row: ResultRow, note: str | None) -> str:
    if row.peak is None:
        return f"no peak: {note}" if note else "no peak"
    return f"{fmt(row.peak.value)} {row.peak.unit} = {row.peak.formula} ({row.peak.source})"


def verdict_text(row: ResultRow) -> str:
    """The verdict in words, with every reason: a flagged figure is never called valid."""
    if not row.flags:
        return VERDICT_WORDS[row.verdict]
    return ("invalid: " if row.verdict == "invalid" else "caution: ") + "; ".join(f.text for f in row.flags)


def references_text(row: ResultRow) -> str:
    out = []
    for r in row.references:
        note = f" [{r.note}]" if r.note else ""
        if r.status == "ok" and r.value is not None:
            ratio = f", ours / theirs {fmt(r.ratio)}" if r.ratio is not None else ""
            out.append(f"{r.tool}: {fmt(r.value)} {r.unit or ''} ({r.metric or 'figure'}{ratio}){note}")
        elif r.status == "none":
            out.append(r.reason or "no reference tool measures this row")
        else:
            out.append(f"{r.tool}: {r.status}{': ' + r.reason if r.reason else ''}{note}")
    return "; ".join(out) or "none run"


def _inventory(inv: dict[str, Any]) -> list[tuple[str, str]]:
    cpu = inv.get("cpu") or {}
    mem = inv.get("memory") or {}
    os_ = inv.get("os") or {}
    cores = cpu.get("cores") or ((cpu.get("cores_per_socket") or 0) * (cpu.get("sockets") or 1)) or None
    facts = [("CPU", f"{cpu.get('model') or cpu.get('model_name') or '—'}, {cpu.get('sockets') or '—'} socket(s), "
                     f"{cores or '—'} cores, {cpu.get('threads') or '—'} threads, best ISA "
                     f"{cpu.get('best_isa') or '—'}")]
    caches = [f"{k.removesuffix('_bytes').upper()} {block(cpu[k])}" for k in ("l1d_bytes", "l2_bytes", "l3_bytes")
              if isinstance(cpu.get(k), int)]
    facts.append(("Caches", ", ".join(caches) or "—"))
    total = mem.get("total_bytes")
    dimm = (f", {mem['channels']} channels × {mem['speed_mts']} MT/s" if mem.get("channels") and mem.get("speed_mts")
            else "")
    facts.append(("Memory", (f"{total / 2**30:.1f} GiB" if isinstance(total, int | float) else "—") + dimm))
    disks = (inv.get("disks") or {}).get("devices") or []
    facts.append(("Disks", ", ".join(
        f"{d.get('name')} {d.get('model') or ''} {fmt(d['size_bytes'] / 1e9) + ' GB' if d.get('size_bytes') else ''}"
        f"{' (rotational)' if d.get('rotational') else ''}".strip() for d in disks if isinstance(d, dict)) or "—"))
    nics = (inv.get("nics") or {}).get("interfaces") or []
    facts.append(("NICs", ", ".join(
        f"{n.get('name')}" + (f" {n['speed_mbps']} Mbit/s" if n.get("speed_mbps") else "")
        + (" (loopback)" if n.get("loopback") else "") for n in nics if isinstance(n, dict)) or "—"))
    facts.append(("OS", " ".join(str(x) for x in (os_.get("distribution"), os_.get("system"), os_.get("kernel"),
                                                   os_.get("arch")) if x) or "—"))
    return facts


def _trace_html(run: ReportRun) -> str:
    trace = run.result.trace if run.result else None
    if trace is None:
        return ""
    u = e(run.unit)
    items = [f"<li>{e(s.cause.replace('_', ' '))}: {e(fmt(s.from_s))} s – {e(fmt(s.to_s))} s, median "
             f"{e(fmt(s.level))} {u} against the trace's 90th percentile {e(fmt(s.reference))} {u}</li>"
             for s in trace.stretches]
    if trace.throttle is not None:
        t = trace.throttle
        items.append(f"<li>throttled at {e(fmt(t.at_s))} s: from {e(fmt(t.baseline))} to {e(fmt(t.level))} {u} "
                     f"(drop {e(pct(t.drop))})</li>")
    items += [f"<li>{e(f.text)}</li>" for f in trace.flags]
    bucket = (f" Each point is the mean of {run.trace_bucket} consecutive samples; the figures are from all of them."
              if run.trace_bucket > 1 else "")
    return (f'<div class="trace"><h4>Trace</h4><p>{trace.n} samples: min {e(fmt(trace.min))}, mean '
            f"{e(fmt(trace.mean))} ± {e(fmt(trace.stddev))}, max {e(fmt(trace.max))} {u}"
            + (f"; CPU share {e(fmt(trace.cpu_share))}" if trace.cpu_share is not None else "") + f".{bucket}</p>"
            + svg.trace(run, fmt)
            + (f"<ul>{''.join(items)}</ul>" if items else "<p>No throttling or CPU-lost stretch.</p>")
            + "</div>")


def extra_text(row: ResultRow) -> str:
    """The row's other figures (means over the repeats: IOPS, latency percentiles, loss), each with its kernel's
    unit, in the kernel's order; "—" when there are none."""
    parts = []
    for key, value in row.extra.items():
        unit = row.extra_units.get(key, "")
        parts.append(f"{key} {fmt(value)}{' ' + unit if unit else ''}")
    return "; ".join(parts) or "—"


def _rows_table(rows: Iterable[ResultRow], note: str | None, words: Axes) -> str:
    head = (f"<tr><th>Op</th><th>{e(words.counts.capitalize())}</th><th>{e(words.size.capitalize())}</th>"
            "<th>Mean ± sd</th><th>95 % CI</th><th>n</th>"
            "<th>Peak (arithmetic)</th><th>Efficiency</th><th>Reference</th><th>Verdict</th>"
            "<th>Other figures (means)</th></tr>")
    body = []
    for r in rows:
        tone = "invalid" if r.verdict == "invalid" else "valid" if r.verdict == "valid" else "caution"
        body.append(
            f'<tr class="{tone}"><td>{e(r.op or "—")}</td><td>{r.threads}</td><td>{e(block(r.block_bytes))}</td>'
            f"<td>{e(mean_sd(r))}</td><td>{e(ci(r))}</td><td>{r.n}</td>"
            f"<td>{e(peak_text(r, note))}</td><td>{e(pct(r.efficiency))}</td><td>{e(references_text(r))}</td>"
            f"<td>{e(verdict_text(r))}</td><td>{e(extra_text(r))}</td></tr>")
    return f'<table class="rows">{head}{"".join(body)}</table>'


def _scaling_table(s: StrongScaling) -> str:
    """Strong scaling of one op: elapsed time, speedup T1/Tn and efficiency T1/(n x Tn) per thread count."""
    base = f"T{s.baseline_threads}"
    eff = "T1/(n·Tn)" if s.baseline_threads == 1 else f"{s.baseline_threads}·{base}/(n·Tn)"
    head = (f"<tr><th>Threads</th><th>Elapsed ({e(s.units['elapsed_s'])}, slowest thread)</th>"
            f"<th>Fastest thread ({e(s.units['elapsed_min_s'])})</th>"
            f"<th>Speedup {base}/Tn ({e(s.units['speedup'])})</th><th>Efficiency {e(eff)}</th></tr>")
    body = [f'<tr class="{"valid" if p.valid else "invalid"}"><td>{p.threads}</td><td>{e(fmt(p.elapsed_s))}</td>'
            f"<td>{e(fmt(p.elapsed_min_s))}</td><td>{e(fmt(p.speedup))}</td><td>{e(pct(p.efficiency))}</td></tr>"
            for p in s.points]
    return (f'<p class="note">Strong scaling{f" of {e(s.op)}" if s.op else ""}: {s.work} units of work per repeat '
            f"split over the threads</p><table class=\"scaling\">{head}{''.join(body)}</table>")


def took(seconds: float | None) -> str:
    """65 → '1 min 5 s', 3700 → '1 h 1 min'; '—' for none."""
    if seconds is None:
        return "—"
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def _summary_html(s: ReportSummary) -> str:
    """The first screen: what was measured, each run's headline with its peak, reference and verdict, and what to
    look at first."""
    span = (f"from {when(s.started_at)} to {when(s.ended_at)}" if s.started_at and s.ended_at
            else f"ended {when(s.ended_at)}" if s.ended_at else "not run yet")
    look = ("".join(f'<li class="{e(a.kind)}">{e(a.text)} '
                    + " ".join(f'<a href="#run-{i}">#{i}</a>' for i in a.run_ids) + "</li>" for a in s.attention)
            if s.attention else "<li>Nothing: every verdict is valid, no headline is far from its peak or "
                                "reference.</li>")
    head = ("<tr><th>Run</th><th>Experiment</th><th>Host</th><th>Headline</th><th>Where</th><th>Peak</th>"
            "<th>Efficiency</th><th>Reference (ours / theirs)</th><th>Verdict</th><th>Took</th><th>Ended</th></tr>")
    body = "".join(
        f'<tr class="{svg.tone(r.verdict) if r.verdict else "invalid"}"><td><a href="#run-{r.run_id}">#{r.run_id}</a>'
        f"</td><td>{e(r.experiment)}</td><td>{e(r.host_name)}</td><td>{e(r.headline)}</td><td>{e(r.where or '—')}"
        f"</td><td>{e(fmt(r.peak) + ' ' + (r.peak_unit or '') if r.peak is not None else '—')}</td>"
        f"<td>{e(pct(r.efficiency))}</td>"
        f"<td>{e((r.reference or '—') + (f' ({fmt(r.reference_ratio)})' if r.reference_ratio is not None else ''))}"
        f"</td><td>{e(VERDICT_WORDS[r.verdict] if r.verdict else r.status)}</td><td>{e(took(r.took_s))}</td>"
        f"<td>{e(when(r.ended_at))}</td></tr>" for r in s.runs)
    return (f'<section id="summary"><h2>Summary</h2><p><strong>Measured:</strong> {e(", ".join(s.experiments))} '
            f"on {e(', '.join(s.hosts) or '—')}, {e(span)}.</p>"
            f'<p><strong>Look at first</strong> <span class="note">({e(s.bounds)})</span>:</p>'
            f'<ul class="attention">{look}</ul><table class="summary">{head}{body}</table></section>')


def _run_html(run: ReportRun) -> str:
    head = (f'<section class="run" id="run-{run.id}"><h3>Run #{run.id}: {e(experiment_title(run.experiment))} on '
            f"{e(run.host_name)}</h3>"
            f'<p class="meta">Job {run.job_id} · status {e(run.status)}'
            + (f" ({e(run.status_reason)})" if run.status_reason else "")
            + f" · finished {e(when(run.finished_at))} · params "
            f"<code>{e(json.dumps(run.params, sort_keys=True))}</code></p>")
    res = run.result
    if res is None:
        return head + "<p>No result: the run did not finish with one.</p></section>"
    flags = "".join(f"<li>{e(f.text)}</li>" for f in res.flags)
    checked = f" (checked: {e('; '.join(res.checked))})" if res.verdict == "valid" and res.checked else ""
    out = [head, f'<p class="verdict">Verdict: <strong>{e(VERDICT_WORDS[res.verdict])}</strong>{checked}</p>'
           + (f"<ul>{flags}</ul>" if flags else "")]
    if res.headline is not None:
        out.append(f'<p class="headline">Headline: {e(res.headline.text)}</p>')
    if res.peak_note:
        out.append(f"<p class='note'>Efficiency unavailable: {e(res.peak_note)}</p>")
    if res.rows:
        kind = RUNS.get(run.experiment)
        kernel = kind.kernel if kind else None
        out.append(_rows_table(res.rows, res.peak_note, axes(kernel, res.rows[0].op)))
        ops = list(dict.fromkeys(r.op for r in res.rows))
        out += [svg.bars([r for r in res.rows if r.op == op], f"{op or run.experiment}: mean, whiskers ± sd",
                         axes(kernel, op), fmt, size_words) for op in ops if res.trace is None]
    out += [_scaling_table(s) for s in res.scaling or []]
    out.append(_trace_html(run))
    return "".join(out) + "</section>"


STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#111;padding:0 1em}
h1{font-size:1.6em}h2{border-bottom:2px solid #333;margin-top:2em}
table{border-collapse:collapse;width:100%;margin:.5em 0}
th,td{border:1px solid #bbb;padding:3px 6px;text-align:left;vertical-align:top;font-size:12px}
tr.invalid td{background:#fdecea}tr.caution td{background:#fef5e7}svg{max-width:100%;height:auto;display:block}
code{font-size:11px;word-break:break-all}.meta,.note{color:#444}
#summary{border:2px solid #333;padding:0 1em 1em;margin-top:1em}#summary h2{margin-top:.5em}
ul.attention li.verdict,ul.attention li.no_result{color:#922}
@media print{body{margin:0;max-width:none}section.run,svg,table{break-inside:avoid}h2{break-before:auto}}
"""


def _json_default(x: object) -> str:
    if isinstance(x, datetime):
        return x.astimezone(UTC).isoformat(timespec="seconds") if x.tzinfo else x.isoformat(timespec="seconds")
    raise TypeError(f"not JSON: {type(x).__name__}")


def csp() -> str:
    """The report's own policy: its one inline stylesheet by hash, images only as data: URLs, no script at all (the
    JSON data block is not run), nothing fetched from anywhere: it works offline and runs nothing it was not born
    with. Sent as a <meta> in the file (a downloaded copy keeps it) and as the header of the download."""
    style = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
    return (f"default-src 'none'; style-src 'sha256-{style}'; img-src data:; base-uri 'none'; "
            "form-action 'none'")


def render(report: Report) -> str:
    hosts = "".join(
        f"<h3>{e(h.name)} ({e(h.hostname)})</h3><table>"
        + "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in _inventory(h.inventory))
        + "".join(f"<tr><th>Label {e(k)}</th><td>{e(v)}</td></tr>" for k, v in sorted(h.labels.items()))
        + "</table>" for h in report.hosts)
    by_id = {r.id: r for r in report.runs}
    areas = "".join(
        f'<section class="area" id="area-{a.area}"><h2>{e(a.title)}</h2>'
        + "".join(_run_html(by_id[i]) for i in a.run_ids) + "</section>" for a in report.areas)
    other = [r for r in report.runs if r.area is None]
    if other:
        areas += '<section class="area"><h2>Other</h2>' + "".join(_run_html(r) for r in other) + "</section>"
    method = "".join(f"<h3>{e(a.title)}</h3><p>{e(a.methodology)} <em>({e(a.source)})</em></p>" for a in report.areas)
    # times to the second in the data too: no ISO timestamp with microseconds anywhere in the file
    data = json.dumps(report.model_dump(mode="python"), ensure_ascii=True, default=_json_default).replace("</", "<\\/")
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f'<meta http-equiv="Content-Security-Policy" content="{csp()}">'
        f"<title>hostbench report: {e(report.selection)}</title><style>{STYLE}</style></head><body>"
        f"<h1>hostbench report: {e(report.selection)}</h1><p class='meta'>Generated "
        f"{e(when(report.generated_at))} · {len(report.runs)} run(s) on {len(report.hosts)} host(s). "
        "Print this page for a PDF.</p>"
        f"{_summary_html(report.summary)}"
        f'<section id="machines"><h2>Machines</h2>{hosts}</section>{areas}'
        f'<section id="methodology"><h2>Methodology</h2><p>{e(report.statistics)} '
        f"<em>(docs/methodology/statistics.md)</em></p>{method}</section>"
        f'<script type="application/json" id="report-data">{data}</script></body></html>')
