// A metric over time: the valid run means as a line with their 95 % CI as a band, the points the
// detector left out drawn hollow, change points as marker lines, thresholds as dashed lines.
import { useMemo } from 'react';
import * as chartjs from 'chart.js';
import type { ChartData, ChartOptions } from 'chart.js';
import { ChartCanvas } from '../../../components/chart/ChartCanvas';
import { Chart } from '../../../components/chart/register';
import { themedAxis } from '../../../components/chart/time-series';
import { chartChrome, invalidColor, markerColors, seriesPalette } from '../../../config/chart';
import { formatNumber } from '../../../lib/format';
import { useTheme } from '../../../lib/theme';
import type { SeriesPublic } from '../api/trends';
import { trendChart } from '../lib/series';

// The CI band fills between its two edges (Filler; the component tests' chart.js stand-in has none).
if ('Filler' in chartjs) Chart.register(chartjs.Filler);

/** A tick as a UTC date and minute; to the second when the runs span less than two hours. */
const dateTick = (v: number | string, seconds = false) =>
  new Date(Number(v)).toISOString().slice(0, seconds ? 19 : 16).replace('T', ' ');

export function TrendChart({ series, title }: { series: SeriesPublic; title: string }) {
  const { theme } = useTheme();
  const d = useMemo(() => trendChart(series), [series]);
  const color = seriesPalette[0] as string;
  const xs = [...d.used, ...d.excluded].map((p) => p.x);
  const [x0, x1] = xs.length ? [Math.min(...xs), Math.max(...xs)] : [0, 1];
  const short = x1 - x0 < 2 * 3600_000;

  const data = useMemo<ChartData<'line', { x: number; y: number }[]>>(
    () => ({
      datasets: [
        { label: 'CI low', data: d.ciLow, borderWidth: 0, pointRadius: 0, fill: false },
        { label: '95 % CI', data: d.ciHigh, borderWidth: 0, pointRadius: 0, fill: '-1', backgroundColor: `${color}33` },
        { label: 'mean (valid runs)', data: d.used, borderColor: color, backgroundColor: color, borderWidth: 2, pointRadius: 3, tension: 0 },
        {
          label: 'left out (verdict not valid)', data: d.excluded, showLine: false, pointRadius: 5, pointStyle: 'rectRot',
          borderColor: invalidColor, backgroundColor: 'transparent', borderWidth: 1.5,
        },
        ...d.thresholds.map((t, i) => ({
          label: `threshold: ${t.label}`, data: [{ x: x0, y: t.y }, { x: x1, y: t.y }], borderDash: [6, 4], pointRadius: 0,
          borderWidth: 1.5, borderColor: seriesPalette[(i + 1) % seriesPalette.length] as string,
        })),
      ],
    }),
    [d, color, x0, x1],
  );

  const options = useMemo<ChartOptions<'line'>>(() => {
    const { text } = chartChrome[theme];
    return {
      animation: false,
      parsing: false,
      responsive: true,
      maintainAspectRatio: false,
      interaction: { mode: 'nearest', intersect: false },
      scales: {
        x: { type: 'linear', ...themedAxis(theme, 'run finished (UTC)'), ticks: { color: text, callback: (v) => dateTick(v, short), maxTicksLimit: 6 } },
        y: { type: 'linear', beginAtZero: false, ...themedAxis(theme, series.unit) },
      },
      plugins: {
        hbMarkers: { markers: d.changes.map((c) => ({ x: c.x, label: c.label, kind: 'alert' })), colors: markerColors[theme], labelColor: text },
        legend: { labels: { color: text, filter: (item) => item.text !== 'CI low' } },
        tooltip: {
          callbacks: {
            title: (items) => (items[0] ? dateTick(items[0].parsed.x ?? 0, true) : ''),
            label: (ctx) => `${ctx.dataset.label ?? ''}: ${formatNumber(ctx.parsed.y)} ${series.unit}`,
          },
        },
      },
    };
  }, [theme, series.unit, d.changes, short]);

  return (
    <ChartCanvas
      type="line"
      data={data}
      options={options}
      label={`${title}: ${d.used.length} valid runs, ${d.excluded.length} left out, ${d.changes.length} changes`}
      png={{ fileName: 'hostbench-trend.png', title }}
    />
  );
}
