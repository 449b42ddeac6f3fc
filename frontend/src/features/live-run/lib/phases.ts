// Phase markers for the live chart: a vertical line where the kernel's phase changes — warm-up,
// each repeat, each thread count, block size or operation. Derived from the samples' own fields
// (threads, repeat, warmup, op, block_bytes), placed at the start of the phase's first interval.
import type { ChartMarker } from '../../../components/chart/plugins/markers';
import type { Sample } from '../../../lib/api/types';
import { FIELD_AXES, countWords, type AxesOf } from '../../../lib/axes';
import { sameConfig } from '../../../lib/series';
import { formatBlockSize } from '../../../lib/units';

/** `axes`: the run's words for a thread count ("1 stream" for network, lib/axes.ts). */
export function phaseMarkers(samples: readonly Sample[], origin: number | null, axes: AxesOf = () => FIELD_AXES): ChartMarker[] {
  const first = samples[0];
  if (!first) return [];
  const t0 = origin ?? first.t - first.interval_s;
  const ops = new Set(samples.map((s) => s.op ?? ''));
  const blocks = new Set(samples.map((s) => s.block_bytes ?? null));
  const out: ChartMarker[] = [];
  let prev: Sample | null = null;
  for (const s of samples) {
    const configChanged = !prev || !sameConfig(prev, s);
    const phaseChanged = configChanged || prev?.warmup !== s.warmup || prev?.repeat !== s.repeat;
    if (phaseChanged) {
      const parts: string[] = [];
      if (configChanged) {
        if (ops.size > 1 && s.op) parts.push(s.op);
        if (blocks.size > 1 && s.block_bytes !== null && s.block_bytes !== undefined) parts.push(formatBlockSize(s.block_bytes));
        parts.push(countWords(axes(s.op), s.threads));
      }
      parts.push(s.warmup ? 'warm-up' : `repeat ${s.repeat}`);
      out.push({
        x: Math.max(0, s.t - s.interval_s - t0),
        label: parts.join(' · '),
        kind: configChanged ? 'config' : s.warmup ? 'warmup' : 'repeat',
      });
    }
    prev = s;
  }
  return out;
}

/** Same markers → same array, so chart options stay stable while samples stream in. */
export function sameMarkers(a: readonly ChartMarker[], b: readonly ChartMarker[]): boolean {
  return a.length === b.length && a.every((m, i) => m.x === b[i]?.x && m.label === b[i]?.label && m.kind === b[i]?.kind);
}
