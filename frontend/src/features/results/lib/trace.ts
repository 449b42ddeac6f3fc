// CPU trace: where the backend's throttling point falls on the chart, and the min/mean/max lines.
// The backend gives `throttle.at_s` in seconds after the first measured (non-warm-up) sample's
// time; the chart's x is seconds since the run's start, so the two differ by that sample's offset.
import type { ChartMarker } from '../../../components/chart/plugins/markers';
import type { RunResult, Sample } from '../../../lib/api/types';
import { formatNumber, formatPercent } from '../../../lib/format';
import { seriesOrigin } from '../../../lib/series';

export type TraceSummary = NonNullable<RunResult['trace']>;
export type Throttle = NonNullable<TraceSummary['throttle']>;

/** x (seconds since run start) of the throttling point, or null without a throttle or samples. */
export function throttleX(samples: readonly Sample[], origin: number | null, throttle: Throttle | null | undefined): number | null {
  if (!throttle) return null;
  const first = samples.find((s) => !s.warmup);
  if (!first) return null;
  const t0 = origin ?? seriesOrigin(samples) ?? 0;
  return first.t - t0 + throttle.at_s;
}

export function throttleText(throttle: Throttle, unit: string): string {
  return (
    `sustained drop of ${formatPercent(throttle.drop)} at ${formatNumber(throttle.at_s, 4)} s: ` +
    `${formatNumber(throttle.baseline)} → ${formatNumber(throttle.level)} ${unit} (30-sample median)`
  );
}

export function traceMarkers(samples: readonly Sample[], origin: number | null, trace: TraceSummary | null | undefined): ChartMarker[] {
  const x = throttleX(samples, origin, trace?.throttle);
  if (x === null || !trace?.throttle) return [];
  return [{ x, label: `throttling −${formatPercent(trace.throttle.drop)}`, kind: 'alert' }];
}

/** Horizontal reference lines for max, mean and min, each a two-point line across the trace. */
export function summaryLines(trace: TraceSummary, x0: number, x1: number): { label: string; points: { x: number; y: number }[]; dash: number[] }[] {
  const line = (label: string, y: number, dash: number[]) => ({ label, dash, points: [{ x: x0, y }, { x: x1, y }] });
  return [line('max', trace.max, [2, 3]), line('mean', trace.mean, [8, 4]), line('min', trace.min, [2, 3])];
}
