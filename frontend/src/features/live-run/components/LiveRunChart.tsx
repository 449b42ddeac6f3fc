// Live throughput line: x = seconds since run start, y = value in the samples' unit, one line per
// thread count (and block size, op), warm-up dashed grey, gaps as gaps, a vertical marker at each
// phase change (warm-up, repeat, thread count, block size). The sample count is exposed as text and as
// data-points so people (and tests) can tell the chart is receiving data without seeing pixels.
import { useId, useMemo } from 'react';
import type { ChartData } from 'chart.js';
import { ChartCanvas } from '../../../components/chart/ChartCanvas';
import type { ChartMarker } from '../../../components/chart/plugins/markers';
import { timeSeriesOptions } from '../../../components/chart/time-series';
import { seriesPalette, warmupColor } from '../../../config/chart';
import { LIVE_DECIMATION } from '../../../config/live';
import type { Sample } from '../../../lib/api/types';
import { formatNumber } from '../../../lib/format';
import type { Theme } from '../../../lib/theme';
import type { AxesOf } from '../../../lib/axes';
import { buildSeries, seriesOrigin } from '../../../lib/series';
import { phaseMarkers } from '../lib/phases';

export interface LiveRunChartProps {
  samples: Sample[];
  t0: number | null;
  unit: string;
  theme: Theme;
  title?: string;
  /** Shown instead of the chart when there are no samples yet. */
  emptyText?: string;
  /** File name for the PNG download. */
  fileName?: string;
  /** The run's words for its thread counts ("1 stream" for network, lib/axes.ts). */
  axes?: AxesOf;
}

export function LiveRunChart({ samples, t0, unit, theme, title = 'Live throughput', emptyText, fileName = 'hostbench-live.png', axes }: LiveRunChartProps) {
  const captionId = useId();
  const series = useMemo(() => buildSeries(samples, t0, undefined, axes), [samples, t0, axes]);
  // Markers change only at a phase boundary; keyed by content so options stay stable in between.
  const markerKey = useMemo(() => JSON.stringify(phaseMarkers(samples, t0 ?? seriesOrigin(samples), axes)), [samples, t0, axes]);
  const markers = useMemo(() => JSON.parse(markerKey) as ChartMarker[], [markerKey]);
  // GPU runs mix units across ops (GFLOP/s, GB/s): then each line names its unit.
  const unitByOp = useMemo(() => {
    const m = new Map<string, string>();
    for (const x of samples) if (!m.has(x.op ?? '')) m.set(x.op ?? '', x.unit);
    return m;
  }, [samples]);
  const mixed = new Set(unitByOp.values()).size > 1;
  const shownUnit = mixed ? 'value (unit per line)' : samples[samples.length - 1]?.unit || unit;

  const data = useMemo<ChartData<'line', { x: number; y: number | null }[]>>(() => {
    const colourOf = new Map<string, string>();
    return {
      datasets: series.map((s) => {
        const colourKey = `${s.op ?? ''}|${s.block_bytes ?? ''}|${s.threads}`;
        if (!colourOf.has(colourKey)) colourOf.set(colourKey, seriesPalette[colourOf.size % seriesPalette.length] as string);
        const colour = s.warmup ? warmupColor : (colourOf.get(colourKey) as string);
        return {
          label: mixed ? `${s.label} (${unitByOp.get(s.op ?? '') ?? ''})` : s.label,
          data: s.points,
          borderColor: colour,
          backgroundColor: colour,
          borderDash: s.warmup ? [6, 4] : [],
          borderWidth: s.warmup ? 1.5 : 2,
          pointRadius: s.points.length > 120 ? 0 : 2,
          pointHoverRadius: 4,
          spanGaps: false,
          tension: 0,
        };
      }),
    };
  }, [series, mixed, unitByOp]);

  const options = useMemo(
    () =>
      timeSeriesOptions({
        theme,
        xTitle: 'seconds since run start',
        yTitle: shownUnit,
        decimation: LIVE_DECIMATION,
        tooltipUnit: mixed ? undefined : shownUnit,
        markers,
        legendFilter: (item) => !item.text.endsWith('(warm-up)'),
      }),
    [theme, shownUnit, markers, mixed],
  );

  const last = samples[samples.length - 1];
  const summary = last
    ? `${samples.length} samples received; latest ${formatNumber(last.value)} ${last.unit} at ${last.threads} thread${last.threads === 1 ? '' : 's'}${last.warmup ? ' (warm-up)' : ''}`
    : '0 samples received';

  return (
    <figure className="chart-figure" aria-labelledby={captionId} data-points={samples.length} data-markers={markers.length}>
      <figcaption id={captionId} className="chart-caption">
        <span className="chart-title">{title}</span>
        <span className="muted small">
          {shownUnit} per second · dashed grey = warm-up (excluded from results) · vertical lines = phase changes · breaks =
          missing samples
        </span>
      </figcaption>
      {samples.length === 0 && emptyText ? (
        <p className="chart-empty">{emptyText}</p>
      ) : null}
      <ChartCanvas type="line" data={data} options={options} label={`${title}: ${summary}`} png={{ fileName, title }} />
      <p className="visually-hidden" data-testid="sample-count">
        {summary}
      </p>
      {markers.length ? (
        <details className="phase-list small">
          <summary>Phases ({markers.length})</summary>
          <ol>
            {markers.map((m) => (
              <li key={`${m.x}-${m.label}`}>
                {formatNumber(m.x, 4)} s: {m.label}
              </li>
            ))}
          </ol>
        </details>
      ) : null}
    </figure>
  );
}
