// The one options block for our time-series line charts (live run, CPU trace, compare overlay): a
// linear x in seconds from 0, a linear y from 0 in the samples' unit, nearest-x hover, points drawn
// without parsing (already {x, y}, sorted), no animation, LTTB decimation, axis and legend text in the
// theme's colours, and optionally the marker lines / bands of the hbMarkers plugin. The grouped bar
// chart shares the themed axis.
import type { ChartOptions, LegendItem } from 'chart.js';
import { chartChrome, markerColors } from '../../config/chart';
import { formatNumber } from '../../lib/format';
import type { Theme } from '../../lib/theme';
import type { ChartBand, ChartMarker } from './plugins/markers';

/** One axis' title, ticks and grid in the theme's chrome colours. */
export function themedAxis(theme: Theme, title: string, display = true) {
  const { text, grid } = chartChrome[theme];
  return { title: { display, text: title, color: text }, ticks: { color: text }, grid: { color: grid } };
}

export interface TimeSeriesOptionsInput {
  theme: Theme;
  xTitle: string;
  yTitle: string;
  /** LTTB decimation: down to `samples` points once a dataset has more than `threshold`. */
  decimation: { samples: number; threshold: number };
  /** Tooltip: "label: value unit"; without a unit, "label: value" (each line names its own unit). */
  tooltipUnit?: string;
  /** Vertical marker lines (and shaded bands) drawn by the hbMarkers plugin. */
  markers?: ChartMarker[];
  bands?: ChartBand[];
  /** Which datasets the legend lists (all when absent). */
  legendFilter?: (item: LegendItem) => boolean;
}

export function timeSeriesOptions({
  theme, xTitle, yTitle, decimation, tooltipUnit, markers, bands, legendFilter,
}: TimeSeriesOptionsInput): ChartOptions<'line'> {
  const { text } = chartChrome[theme];
  return {
    animation: false,
    parsing: false,
    normalized: true,
    responsive: true,
    maintainAspectRatio: false,
    spanGaps: false,
    interaction: { mode: 'nearest', axis: 'x', intersect: false },
    scales: {
      x: { type: 'linear', min: 0, ...themedAxis(theme, xTitle) },
      y: { type: 'linear', beginAtZero: true, ...themedAxis(theme, yTitle) },
    },
    plugins: {
      decimation: { enabled: true, algorithm: 'lttb', samples: decimation.samples, threshold: decimation.threshold },
      ...(markers ? { hbMarkers: { markers, ...(bands ? { bands } : {}), colors: markerColors[theme], labelColor: text } } : {}),
      legend: { labels: legendFilter ? { color: text, filter: legendFilter } : { color: text } },
      tooltip: {
        callbacks: {
          label: (ctx) => `${ctx.dataset.label ?? ''}: ${formatNumber(ctx.parsed.y)}${tooltipUnit === undefined ? '' : ` ${tooltipUnit}`}`,
        },
      },
    },
  };
}

/** A measured line as the trace and the overlay draw it: thin, no points, gaps kept as gaps. */
export function traceLine<P>(label: string, points: P[], color: string) {
  return { label, data: points, borderColor: color, backgroundColor: color, borderWidth: 1.5, pointRadius: 0, spanGaps: false, tension: 0 };
}
