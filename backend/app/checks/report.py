"""A health check's report as one self-contained HTML file (as the suite report: styles inline, the check's JSON
embedded as data, no script, nothing fetched): one line per host with its verdict, worst first; then the failures
with their evidence (value, band and its version or basis, distance, the run), then the disturbed measurements."""
import base64
import hashlib
import html
import json

from app.checks.schemas import CheckPublic, Figure
from app.reports.html import block, fmt

COLOURS = {"FAIL": "#b3261e", "DISTURBED": "#8a5a00", "NO_BASELINE": "#555", "PASS": "#1e6b32", "PENDING": "#555"}
STYLE = """body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1b1b1b}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}th,td{border-bottom:1px solid #ddd;padding:.3rem .5rem;
text-align:left;vertical-align:top}th{background:#f4f4f4}.v{font-weight:700}.num{text-align:right;
font-variant-numeric:tabular-nums}small{color:#555}"""


def csp() -> str:
    """As the suite report's (app.reports.html.csp): this file's one stylesheet by hash, no script, nothing fetched."""
    style = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
    return f"default-src 'none'; style-src 'sha256-{style}'; base-uri 'none'; form-action 'none'"


def e(x: object) -> str:
    return html.escape(str(x), quote=True)


def _figure(f: Figure) -> str:
    k = f.figure
    parts = [k.experiment, k.op or "", f"{k.threads} thread{'s' if k.threads != 1 else ''}"]
    if k.block_bytes:
        parts.append(block(k.block_bytes))
    return " · ".join(p for p in parts if p)


def _band(f: Figure) -> str:
    b = f.band
    if b is None:
        return "—"
    rng = f"{fmt(b.lower) if b.lower is not None else '−∞'} … {fmt(b.upper) if b.upper is not None else '+∞'} {b.unit}"
    if b.source == "declared":
        who = f", set by {b.set_by} {b.set_at:%Y-%m-%d %H:%M} UTC" if b.set_at else ""
        of = " (fractions of the peak)" if b.of_peak else ""
        return f"{rng}; declared for {b.kind}, version {b.version}{of}{who}" + (f"; {b.note}" if b.note else "")
    basis = ", ".join(f"{s.host_name} (run {s.run_id}: {fmt(s.value)})" for s in b.siblings)
    return (f"{rng}; learned for {b.kind}: median {fmt(b.centre)}, robust SD {fmt(b.spread)} of {len(b.siblings)} "
            f"hosts: {basis}")


def _run(f: Figure, base: str) -> str:
    return f'<a href="{e(base)}/runs/{f.run_id}">run {f.run_id}</a>'


def render(check: CheckPublic, base_url: str = "") -> str:
    base = base_url.rstrip("/")
    lines = []
    for h in check.hosts:
        c = h.counts
        lines.append(f'<tr><td>{e(h.host_name)}</td><td class="v" style="color:{COLOURS[h.verdict]}">'
                     f'{e(h.verdict.replace("_", " "))}</td><td>{e(h.reason)}'
                     f'{f"<br><small>{e(h.in_turn)}</small>" if h.in_turn else ""}</td>'
                     f'<td class="num">{c.get("fail", 0)}</td><td class="num">{c.get("disturbed", 0)}</td>'
                     f'<td class="num">{c.get("pass", 0)}</td><td class="num">{c.get("no_baseline", 0)}</td></tr>')
    fails, disturbed = [], []
    for h in check.hosts:
        for f in h.figures:
            if f.status == "fail":
                fails.append(f'<tr><td>{e(h.host_name)}</td><td>{e(_figure(f))}</td>'
                             f'<td class="num">{fmt(f.value)} {e(f.unit)}</td><td>{e(_band(f))}</td>'
                             f'<td class="num">{"—" if f.distance is None else f"{f.distance * 100:+.1f} %"}</td>'
                             f'<td>{_run(f, base)}</td></tr>')
            elif f.status in ("disturbed", "not_judged"):
                disturbed.append(f'<tr><td>{e(h.host_name)}</td><td>{e(_figure(f))}</td>'
                                 f'<td class="num">{fmt(f.value)} {e(f.unit)}</td><td>{e(f.reason)}</td>'
                                 f'<td>{_run(f, base)}</td></tr>')
    counts = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in check.counts.items() if n)
    data = json.dumps(check.model_dump(mode="json")).replace("</", "<\\/")
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{e(csp())}">
<title>hostbench health check {check.id}: {e(check.title)}</title><style>{STYLE}</style></head><body>
<h1>Health check {check.id}: {e(check.title)}</h1>
<p>{len(check.hosts)} host{'s' if len(check.hosts) != 1 else ''}{f' labelled {e(check.label)}' if check.label else ''};
started {check.created_at:%Y-%m-%d %H:%M} UTC by {e(check.created_by or '—')};
{f'judged {check.judged_at:%Y-%m-%d %H:%M} UTC' if check.judged_at else 'not judged yet'}: {e(counts)}.
Learned bands take siblings by <b>{e(check.kind_by)}</b>.</p>
<h2>Hosts</h2><table><tr><th>host</th><th>verdict</th><th>why</th><th>failed</th><th>disturbed</th><th>passed</th>
<th>no band</th></tr>{''.join(lines)}</table>
<h2>Failures</h2>{'<p>None.</p>' if not fails else '<table><tr><th>host</th><th>figure</th><th>value</th>'
'<th>band</th><th>distance</th><th>evidence</th></tr>' + ''.join(fails) + '</table>'}
<h2>Disturbed measurements</h2><p><small>A measurement that was not valid (other processes took the CPU, the repeats
spread, ...) says nothing about the host: rerun it. A disk or network figure its host's own CPU quota throttled
(CPU-bound) is listed here too: it measured the quota, which the host's CPU figures are judged on.</small></p>
{'<p>None.</p>' if not disturbed else '<table><tr><th>host</th><th>figure</th><th>value</th><th>why not valid</th>'
'<th>evidence</th></tr>' + ''.join(disturbed) + '</table>'}
<script type="application/json" id="hostbench-check">{data}</script>
</body></html>
"""
