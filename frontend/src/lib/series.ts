// Samples → chart series. One series per (op, block size, thread count), warm-up in its own dashed
// series.
// Gaps are drawn as gaps: a null point where a seq is missing or time jumps by more than
// GAP_FACTOR × the sample interval (the chart runs with spanGaps: false).
import type { Sample } from './api/types';
import { GAP_FACTOR } from '../config/live';
import { FIELD_AXES, type AxesOf } from './axes';
import { threadsLabel } from './matrix';
import { formatBlockSize } from './units';

export interface Point {
  x: number;
  y: number | null;
}

export interface Series {
  key: string;
  label: string;
  threads: number;
  op: string | null;
  block_bytes: number | null;
  warmup: boolean;
  points: Point[];
}

interface Last {
  seq: number;
  t: number;
  interval: number;
  x: number;
}

function groupKey(s: Sample): string {
  return `${s.op ?? ''}|${s.block_bytes ?? ''}|${s.threads}|${s.warmup ? 'w' : 'm'}`;
}

/** The two samples come from the same configuration (thread count, op, block size). */
export function sameConfig(a: Sample, b: Sample): boolean {
  return a.threads === b.threads && (a.op ?? '') === (b.op ?? '') && (a.block_bytes ?? null) === (b.block_bytes ?? null);
}

/** True when the step from a to b (same series, b after a) should break the line. */
export function isGap(a: { seq: number; t: number; interval: number }, b: Sample, gapFactor = GAP_FACTOR): boolean {
  if (b.seq - a.seq > 1) return true;
  const interval = Math.max(a.interval, b.interval_s, 1e-9);
  return b.t - a.t > gapFactor * interval;
}

/** Start of the run on the samples' own clock: the first interval's start. */
export function seriesOrigin(samples: readonly Sample[]): number | null {
  const first = samples[0];
  return first ? first.t - first.interval_s : null;
}

/** `axes`: the run's words for a thread count ("1 stream" for network, lib/axes.ts). */
export function buildSeries(samples: readonly Sample[], t0: number | null, gapFactor = GAP_FACTOR, axes: AxesOf = () => FIELD_AXES): Series[] {
  const origin = t0 ?? seriesOrigin(samples) ?? 0;
  const ops = new Set(samples.map((s) => s.op ?? ''));
  const blocks = new Set(samples.map((s) => s.block_bytes ?? null));
  const byKey = new Map<string, Series>();
  const lastByKey = new Map<string, Last>();

  const append = (series: Series, s: Sample) => {
    const x = s.t - origin;
    const last = lastByKey.get(series.key);
    if (last && isGap(last, s, gapFactor)) series.points.push({ x: (last.x + x) / 2, y: null });
    series.points.push({ x, y: s.value });
    lastByKey.set(series.key, { seq: s.seq, t: s.t, interval: s.interval_s, x });
  };

  samples.forEach((s, i) => {
    const key = groupKey(s);
    let series = byKey.get(key);
    if (!series) {
      const opPrefix = ops.size > 1 && s.op ? `${s.op} ` : '';
      const blockPrefix = blocks.size > 1 && s.block_bytes != null ? `${formatBlockSize(s.block_bytes)} ` : '';
      const threads = threadsLabel(s.threads, axes(s.op));
      series = {
        key,
        label: `${opPrefix}${blockPrefix}${threads}${s.warmup ? ' (warm-up)' : ''}`,
        threads: s.threads,
        op: s.op ?? null,
        block_bytes: s.block_bytes ?? null,
        warmup: s.warmup,
        points: [],
      };
      byKey.set(key, series);
    }
    append(series, s);
    // Carry the warm-up line into the first measured point so the two read as one phase change,
    // not as a gap in the data.
    const next = samples[i + 1];
    if (s.warmup && next && !next.warmup && sameConfig(s, next)) {
      const last = lastByKey.get(key) as Last;
      if (!isGap(last, next, gapFactor)) series.points.push({ x: next.t - origin, y: next.value });
    }
  });
  return [...byKey.values()];
}
