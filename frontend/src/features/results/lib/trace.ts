// CPU trace: where the backend's throttling point falls on the chart, and the min/mean/max lines.
// The backend gives `throttle.at_s` in seconds after the first measured (non-warm-up) sample's
// time; the chart's x is seconds since the run's start, so the two differ by that sample's offset.
import type { ChartBand, ChartMarker } from '../../../components/chart/plugins/markers';
import type { RunResult, Sample } from '../../../lib/api/types';
import { formatNumber, formatPercent } from '../../../lib/format';
import { seriesOrigin } from '../../../lib/series';

export type TraceSummary = NonNullable<RunResult['trace']>;
export type Throttle = NonNullable<TraceSummary['throttle']>;
export type Stretch = NonNullable<TraceSummary['stretches']>[number];

/** What a stretch's cause means, in words (the backend's cause; app/results/service.py trace_stretches). */
export const stretchCauseText: Record<Stretch['cause'], string> = {
  cpu_lost: 'CPU lost',
  throttled: 'clock fell',
  unknown: 'rate fell',
};

function firstMeasured(samples: readonly Sample[], origin: number | null): number | null {
  const first = samples.find((s) => !s.warmup);
  if (!first) return null;
  return first.t - (origin ?? seriesOrigin(samples) ?? 0);
}

/** Shaded x ranges for the stretches where the rate fell: amber where the kernel lost its CPU, red where the clock fell. */
export function stretchBands(samples: readonly Sample[], origin: number | null, trace: TraceSummary | null | undefined): ChartBand[] {
  const x0 = firstMeasured(samples, origin);
  if (x0 === null || !trace?.stretches?.length) return [];
  // at_s / from_s count from the first measured sample's end; the chart's x is its end too.
  return trace.stretches.map((s) => ({ from: x0 + s.from_s, to: x0 + s.to_s, kind: s.cause === 'cpu_lost' ? 'lost' : 'alert' }));
}

export function stretchText(s: Stretch, unit: string): string {
  return `${stretchCauseText[s.cause]} ${Math.round(s.from_s)}–${Math.round(s.to_s)} s: ${formatNumber(s.reference, 3)} → ${formatNumber(s.level, 3)} ${unit}`;
}

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
  const x0 = firstMeasured(samples, origin);
  if (x0 !== null && trace?.stretches?.length) {
    // The stretches supersede the single throttle point: each says whether the CPU or the clock was lost.
    return trace.stretches.map((s) => ({ x: x0 + s.from_s, label: stretchCauseText[s.cause], kind: s.cause === 'cpu_lost' ? 'lost' : 'alert' }));
  }
  const x = throttleX(samples, origin, trace?.throttle);
  if (x === null || !trace?.throttle) return [];
  return [{ x, label: `throttling −${formatPercent(trace.throttle.drop)}`, kind: 'alert' }];
}

/** Horizontal reference lines for max, mean and min, each a two-point line across the trace. */
export function summaryLines(trace: TraceSummary, x0: number, x1: number): { label: string; points: { x: number; y: number }[]; dash: number[] }[] {
  const line = (label: string, y: number, dash: number[]) => ({ label, dash, points: [{ x: x0, y }, { x: x1, y }] });
  return [line('max', trace.max, [2, 3]), line('mean', trace.mean, [8, 4]), line('min', trace.min, [2, 3])];
}
