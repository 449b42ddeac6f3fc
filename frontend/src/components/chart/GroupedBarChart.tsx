// Grouped bars with stddev whiskers: one group of bars per category (a block size, a thread count or
// a matrix cell), one colour per series (a thread count, or a run when comparing). Invalid figures
// get a red outline and say so in the tooltip. The caller puts the same numbers in a table next to
// it: the table is the chart's text alternative.
import { useId, useMemo } from 'react';
import type { ChartData, ChartOptions } from 'chart.js';
import { chartChrome, invalidColor, markerColors, seriesPalette } from '../../config/chart';
import { formatNumber } from '../../lib/format';
import type { Theme } from '../../lib/theme';
import { ChartCanvas } from './ChartCanvas';
import type { ErrorBar } from './plugins/error-bars';
import type { ChartMarker } from './plugins/markers';
import { themedAxis } from './time-series';

export interface BarSeries {
  label: string;
  values: (number | null)[];
  /** Whisker per value, in the value's unit (mean ± stddev). */
  errors?: (ErrorBar | null)[];
  invalid?: boolean[];
  /** Extra tooltip lines per value (min, max, CI, efficiency…). */
  notes?: (string[] | null)[];
  color?: string;
}

export interface GroupedBarChartProps {
  title: string;
  subtitle?: string;
  categories: string[];
  series: BarSeries[];
  unit: string;
  theme: Theme;
  xTitle?: string;
  fileName: string;
  height?: number;
  /** Vertical lines on the category axis (x = a category's index, fractions between two), e.g. cache sizes. */
  markers?: ChartMarker[];
}

/** The largest figure a whisker or bar reaches, so whiskers never run off the top. */
export function valueCeiling(series: readonly BarSeries[]): number {
  let max = 0;
  for (const s of series) {
    s.values.forEach((v, i) => {
      const top = Math.max(v ?? 0, s.errors?.[i]?.high ?? 0);
      if (Number.isFinite(top) && top > max) max = top;
    });
  }
  return max;
}

export function GroupedBarChart({ title, subtitle, categories, series, unit, theme, xTitle, fileName, height = 300, markers }: GroupedBarChartProps) {
  const captionId = useId();
  const data = useMemo<ChartData<'bar', (number | null)[], string>>(
    () => ({
      labels: categories,
      datasets: series.map((s, i) => {
        const color = s.color ?? (seriesPalette[i % seriesPalette.length] as string);
        return {
          label: s.label,
          data: s.values,
          errorBars: s.errors ?? [],
          backgroundColor: s.values.map((_, j) => (s.invalid?.[j] ? `${color}55` : `${color}cc`)),
          borderColor: s.values.map((_, j) => (s.invalid?.[j] ? invalidColor : color)),
          borderWidth: s.values.map((_, j) => (s.invalid?.[j] ? 2 : 1)),
          maxBarThickness: 56,
          // Few bars would otherwise sit far apart across the whole width.
          categoryPercentage: Math.min(0.8, Math.max(0.3, 0.12 * series.length * categories.length)),
        };
      }),
    }),
    [categories, series],
  );

  const ceiling = useMemo(() => valueCeiling(series), [series]);
  const options = useMemo<ChartOptions<'bar'>>(() => {
    const { text } = chartChrome[theme];
    return {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      scales: {
        x: themedAxis(theme, xTitle ?? '', Boolean(xTitle)),
        y: { beginAtZero: true, suggestedMax: ceiling > 0 ? ceiling * 1.05 : undefined, ...themedAxis(theme, unit) },
      },
      plugins: {
        legend: { display: series.length > 1, labels: { color: text } },
        hbErrorBars: { color: text, lineWidth: 1.5 },
        ...(markers?.length ? { hbMarkers: { markers, colors: markerColors[theme], labelColor: text } } : {}),
        tooltip: {
          callbacks: {
            label: (ctx) => {
              const s = series[ctx.datasetIndex];
              const err = s?.errors?.[ctx.dataIndex];
              const v = ctx.parsed.y;
              const spread = err && v !== null ? ` ± ${formatNumber((err.high - err.low) / 2)}` : '';
              const bad = s?.invalid?.[ctx.dataIndex] ? ' (invalid)' : '';
              return `${ctx.dataset.label ?? ''}: ${formatNumber(v)}${spread} ${unit}${bad}`;
            },
            afterLabel: (ctx) => series[ctx.datasetIndex]?.notes?.[ctx.dataIndex] ?? [],
          },
        },
      },
    };
  }, [theme, unit, xTitle, series, ceiling, markers]);

  const points = series.reduce((n, s) => n + s.values.filter((v) => v !== null).length, 0);
  return (
    <figure className="chart-figure" aria-labelledby={captionId} data-bars={points}>
      <figcaption id={captionId} className="chart-caption">
        <span className="chart-title">{title}</span>
        {subtitle ? <span className="muted small">{subtitle}</span> : null}
      </figcaption>
      <ChartCanvas
        type="bar"
        data={data}
        options={options}
        height={height}
        label={`${title}: ${points} bars in ${unit}, whiskers = ± stddev; the table gives every figure`}
        png={{ fileName, title }}
      />
    </figure>
  );
}
