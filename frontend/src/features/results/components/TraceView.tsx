// CPU trace result: the per-second line (600 samples for a 10-minute trace), the backend's
// min / mean / max as horizontal lines and figures, and a red marker where it detected throttling
// (a sustained drop). 600 points draw without parsing, normalized, LTTB-decimated past 1 600.
import { useId, useMemo } from 'react';
import type { ChartData } from 'chart.js';
import { ChartCanvas } from '../../../components/chart/ChartCanvas';
import { timeSeriesOptions, traceLine } from '../../../components/chart/time-series';
import { seriesPalette, warmupColor } from '../../../config/chart';
import { LIVE_DECIMATION } from '../../../config/live';
import type { Sample } from '../../../lib/api/types';
import { formatNumber } from '../../../lib/format';
import { buildSeries, seriesOrigin } from '../../../lib/series';
import type { Theme } from '../../../lib/theme';
import { stretchBands, stretchText, summaryLines, throttleText, traceMarkers, type Stretch, type TraceSummary } from '../lib/trace';

export interface TraceViewProps {
  trace: TraceSummary;
  samples: Sample[];
  t0: number | null;
  unit: string;
  theme: Theme;
  fileName: string;
}

export function TraceView({ trace, samples, t0, unit, theme, fileName }: TraceViewProps) {
  const captionId = useId();
  const origin = t0 ?? seriesOrigin(samples);
  const measured = useMemo(() => buildSeries(samples, origin).filter((s) => !s.warmup), [samples, origin]);
  const markers = useMemo(() => traceMarkers(samples, origin, trace), [samples, origin, trace]);
  const bands = useMemo(() => stretchBands(samples, origin, trace), [samples, origin, trace]);
  const stretches = trace.stretches ?? [];
  const lost = stretches.filter((s) => s.cause === 'cpu_lost');
  const fell = stretches.filter((s) => s.cause !== 'cpu_lost');

  const data = useMemo<ChartData<'line', { x: number; y: number | null }[]>>(() => {
    const xs = measured.flatMap((s) => s.points.map((p) => p.x));
    const x0 = xs.length ? Math.min(...xs) : 0;
    const x1 = xs.length ? Math.max(...xs) : 1;
    return {
      datasets: [
        ...measured.map((s, i) =>
          traceLine(measured.length > 1 ? s.label : `${unit} per second`, s.points, seriesPalette[i % seriesPalette.length] as string),
        ),
        ...summaryLines(trace, x0, x1).map((l) => ({
          label: l.label,
          data: l.points,
          borderColor: warmupColor,
          backgroundColor: warmupColor,
          borderDash: l.dash,
          borderWidth: 1,
          pointRadius: 0,
        })),
      ],
    };
  }, [measured, trace, unit]);

  const options = useMemo(
    () =>
      timeSeriesOptions({ theme, xTitle: 'seconds since run start', yTitle: unit, decimation: LIVE_DECIMATION, tooltipUnit: unit, markers, bands }),
    [theme, unit, markers, bands],
  );

  const points = measured.reduce((n, s) => n + s.points.filter((p) => p.y !== null).length, 0);
  const throttle = trace.throttle;
  // Stretches where the rate fell say "throttling"; an older result has only the single throttle figure.
  const throttled = Boolean(fell.length || (!stretches.length && throttle));
  return (
    <figure
      className="chart-figure trace-view"
      aria-labelledby={captionId}
      data-points={points}
      data-throttle={throttled ? 'yes' : 'no'}
      data-cpu-lost={lost.length ? 'yes' : 'no'}
    >
      <figcaption id={captionId} className="chart-caption">
        <span className="chart-title">CPU trace</span>
        <span className="muted small">
          {unit} per second · dashed = max / mean / min{throttled ? ' · red = the clock fell (throttling)' : ''}
          {lost.length ? ' · amber = the kernel lost its CPU to other work (not throttling)' : ''}
        </span>
      </figcaption>
      <TraceStats trace={trace} unit={unit} lost={lost} fell={fell} throttled={throttled} />
      <ChartCanvas
        type="line"
        data={data}
        options={options}
        height={340}
        label={`CPU trace: ${points} samples, min ${formatNumber(trace.min)}, mean ${formatNumber(trace.mean)}, max ${formatNumber(trace.max)} ${unit}${throttle ? `; ${throttleText(throttle, unit)}` : ''}`}
        png={{ fileName, title: 'CPU trace' }}
      />
    </figure>
  );
}

interface TraceStatsProps {
  trace: TraceSummary;
  unit: string;
  /** Stretches where the kernel lost its CPU to other work, and where the rate fell (throttling). */
  lost: Stretch[];
  fell: Stretch[];
  throttled: boolean;
}

/** The backend's figures for the trace, and where it lost its CPU or throttled, in words. */
function TraceStats({ trace, unit, lost, fell, throttled }: TraceStatsProps) {
  const figures: [string, number | null | undefined][] = [
    ['Min', trace.min],
    ['Mean', trace.mean],
    ['Max', trace.max],
    ['Stddev', trace.stddev],
  ];
  return (
    <dl className="facts facts-inline trace-stats" aria-label="Trace summary">
      <div>
        <dt>Samples</dt>
        <dd>{trace.n}</dd>
      </div>
      {figures.map(([label, v]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>
            {formatNumber(v)} {unit}
          </dd>
        </div>
      ))}
      {trace.cpu_share !== null && trace.cpu_share !== undefined ? (
        <div>
          <dt>CPU share</dt>
          <dd className={trace.cpu_share < 0.9 ? 'text-warn' : undefined}>{formatNumber(trace.cpu_share, 3)}</dd>
        </div>
      ) : null}
      <div>
        <dt>CPU lost</dt>
        <dd className={lost.length ? 'text-warn' : undefined}>{lost.length ? lost.map((s) => stretchText(s, unit)).join('; ') : 'none detected'}</dd>
      </div>
      <div>
        <dt>Throttling</dt>
        <dd className={throttled ? 'text-bad' : undefined}>
          {fell.length ? fell.map((s) => stretchText(s, unit)).join('; ') : throttled && trace.throttle ? throttleText(trace.throttle, unit) : 'none detected'}
        </dd>
      </div>
    </dl>
  );
}
