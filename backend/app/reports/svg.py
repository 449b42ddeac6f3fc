"""The downloaded report's charts as inline SVG, readable as the dashboard's: a value axis with round ticks and
grid lines, its unit as the axis title, one label per bar that never runs into the next (two short lines, turned
when the bars are narrow), the axis title of the bars in the kernel's words (threads, streams, message size), and the
peak line inside the plot with its label. Every figure is the report's; only positions are computed here."""
import html
import math
from collections.abc import Callable

from hostbench_common.axes import Axes, count_words

from app.reports.schemas import ReportRun
from app.results.schemas import ResultRow

W = 720
LEFT, RIGHT, TOP = 70, 16, 28
FONT = 11
TONES = {"valid": "#2e86c1", "caution": "#d68910", "invalid": "#c0392b"}


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def nice_ticks(high: float, n: int = 5) -> list[float]:
    """0 and round steps (1, 2, 2.5 or 5 × 10^k) up to at least `high`: 0, 20, 40, 60 for 57."""
    if not math.isfinite(high) or high <= 0:
        return [0.0, 1.0]
    raw = high / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    count = math.ceil(high / step - 1e-9)
    return [round(i * step, 12) for i in range(count + 1)]


def tick_text(v: float) -> str:
    """A tick as people write it: 0, 2.5, 1,000, 0.002 (no exponent, no trailing zeros)."""
    if v == 0:
        return "0"
    text = f"{v:,.6f}".rstrip("0").rstrip(".")
    return text


def _value_axis(ticks: list[float], y: Callable[[float], float], right: float, unit: str, height: float) -> list[str]:
    parts = []
    for t in ticks:
        parts.append(f'<line x1="{LEFT}" y1="{y(t):.1f}" x2="{right}" y2="{y(t):.1f}" stroke="#ddd"/>'
                     f'<text x="{LEFT - 6}" y="{y(t) + 4:.1f}" font-size="{FONT}" text-anchor="end">'
                     f"{_e(tick_text(t))}</text>")
    mid = (TOP + height) / 2
    parts.append(f'<text x="14" y="{mid:.1f}" font-size="{FONT}" text-anchor="middle" '
                 f'transform="rotate(-90 14 {mid:.1f})">{_e(unit)}</text>')
    return parts


def tone(verdict: str) -> str:
    return "invalid" if verdict == "invalid" else "valid" if verdict == "valid" else "caution"


def bars(rows: list[ResultRow], title: str, words: Axes, fmt: Callable[[float | None], str],
         size: Callable[[int], str]) -> str:
    """Mean per row with ± sd whiskers, the rows in (size, count) order, and the peak as a dashed line."""
    rows = sorted(rows, key=lambda r: (r.block_bytes or 0, r.threads))
    unit = rows[0].unit
    peak = max((r.peak.value for r in rows if r.peak is not None), default=None)
    high = max([r.mean + r.stddev for r in rows] + ([peak * 1.08] if peak else []))
    ticks = nice_ticks(high)
    top = ticks[-1]
    bw = (W - LEFT - RIGHT) / max(1, len(rows))
    turned = bw < 64  # labels turned 40° where two short lines would not fit under a bar
    sized = any(r.block_bytes is not None for r in rows)
    labels = [([size(r.block_bytes)] if r.block_bytes is not None else []) + [count_words(words, r.threads)]
              for r in rows]
    longest = max(len(" ".join(lbl)) for lbl in labels)
    bottom = (28 + int(longest * FONT * 0.42)) if turned else 22 + 14 * max(len(lbl) for lbl in labels)
    plot_h = 230
    h = TOP + plot_h + bottom + 18
    base = TOP + plot_h
    y = lambda v: base - plot_h * v / top  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" role="img" aria-label="{_e(title)}">',
             f'<text x="{LEFT}" y="16" font-size="12" font-weight="bold">{_e(title)}</text>',
             *_value_axis(ticks, y, W - RIGHT, unit, base)]
    for i, (r, lbl) in enumerate(zip(rows, labels, strict=True)):
        x = LEFT + i * bw
        cx = x + bw / 2
        mean = f"{fmt(r.mean)} ± {fmt(r.stddev)} {r.unit}" if r.n > 1 else f"{fmt(r.mean)} {r.unit} (one repeat)"
        parts.append(f'<rect x="{x + bw * 0.15:.1f}" y="{y(r.mean):.1f}" width="{bw * 0.7:.1f}" '
                     f'height="{max(0.0, base - y(r.mean)):.1f}" fill="{TONES[tone(r.verdict)]}"><title>'
                     f"{_e(', '.join(lbl))}: {_e(mean)}</title></rect>")
        if r.n > 1 and r.stddev > 0:
            parts.append(f'<line x1="{cx:.1f}" y1="{y(r.mean + r.stddev):.1f}" x2="{cx:.1f}" '
                         f'y2="{y(max(0.0, r.mean - r.stddev)):.1f}" stroke="#000"/>')
        if turned:
            ty = base + 12
            parts.append(f'<text x="{cx:.1f}" y="{ty}" font-size="{FONT}" text-anchor="end" '
                         f'transform="rotate(-40 {cx:.1f} {ty})">{_e(", ".join(lbl))}</text>')
        else:
            parts += [f'<text x="{cx:.1f}" y="{base + 14 * (k + 1)}" font-size="{FONT}" text-anchor="middle">'
                      f"{_e(text)}</text>" for k, text in enumerate(lbl)]
    parts.append(f'<line x1="{LEFT}" y1="{base}" x2="{W - RIGHT}" y2="{base}" stroke="#555"/>')
    axis = f"{words.size} · {words.counts}" if sized else words.counts
    parts.append(f'<text x="{(LEFT + W - RIGHT) / 2:.1f}" y="{h - 6}" font-size="{FONT}" text-anchor="middle">'
                 f"{_e(axis)}</text>")
    if peak:
        parts.append(f'<line x1="{LEFT}" y1="{y(peak):.1f}" x2="{W - RIGHT}" y2="{y(peak):.1f}" stroke="#c0392b" '
                     f'stroke-dasharray="6 4"/><text x="{W - RIGHT - 4}" y="{y(peak) - 5:.1f}" font-size="{FONT}" '
                     f'text-anchor="end" fill="#c0392b">peak {_e(fmt(peak))} {_e(unit)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def trace(run: ReportRun, fmt: Callable[[float | None], str]) -> str:
    """The trace's points, its mean, and its stretches shaded: throttled red, CPU lost orange; both axes ticked."""
    summary = run.result.trace if run.result else None
    pts = run.trace_points
    if summary is None or not pts:
        return ""
    plot_h, bottom = 200, 40
    h = TOP + plot_h + bottom
    base = TOP + plot_h
    xs = nice_ticks(max(p[0] for p in pts) or 1.0, 6)
    ys = nice_ticks(max(p[1] for p in pts) or 1.0)
    x = lambda t: LEFT + (W - LEFT - RIGHT) * t / xs[-1]  # noqa: E731
    y = lambda v: base - plot_h * v / ys[-1]  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" role="img" aria-label="trace">',
             f'<text x="{LEFT}" y="16" font-size="12" font-weight="bold">Trace: one point per sample</text>',
             *_value_axis(ys, y, W - RIGHT, run.unit, base)]
    for t in xs:
        parts.append(f'<line x1="{x(t):.1f}" y1="{base}" x2="{x(t):.1f}" y2="{base + 4}" stroke="#555"/>'
                     f'<text x="{x(t):.1f}" y="{base + 16}" font-size="{FONT}" text-anchor="middle">'
                     f"{_e(tick_text(t))}</text>")
    for s in summary.stretches:
        color = "#f5b041" if s.cause == "cpu_lost" else "#e74c3c"
        parts.append(f'<rect x="{x(s.from_s):.1f}" y="{TOP}" width="{max(1.0, x(s.to_s) - x(s.from_s)):.1f}" '
                     f'height="{plot_h}" fill="{color}" opacity="0.3"><title>{_e(s.cause.replace("_", " "))} '
                     f'{_e(fmt(s.from_s))}–{_e(fmt(s.to_s))} s</title></rect>')
    if summary.throttle is not None:
        parts.append(f'<line x1="{x(summary.throttle.at_s):.1f}" y1="{TOP}" x2="{x(summary.throttle.at_s):.1f}" '
                     f'y2="{base}" stroke="#c0392b" stroke-width="2"/>')
    line = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in pts)
    parts += [f'<polyline points="{line}" fill="none" stroke="#2e86c1" stroke-width="1.2"/>',
              f'<line x1="{LEFT}" y1="{y(summary.mean):.1f}" x2="{W - RIGHT}" y2="{y(summary.mean):.1f}" '
              f'stroke="#555" stroke-dasharray="4 3"/>',
              f'<line x1="{LEFT}" y1="{base}" x2="{W - RIGHT}" y2="{base}" stroke="#555"/>',
              f'<text x="{(LEFT + W - RIGHT) / 2:.1f}" y="{h - 4}" font-size="{FONT}" text-anchor="middle">'
              "seconds since the first sample</text></svg>"]
    return "".join(parts)
