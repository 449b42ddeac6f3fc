// Trace runs drawn over one another: each run's measured samples on its own clock (x = seconds
// since that run's start), gaps kept as gaps. Warm-up is left out: it is not part of the trace.
import type { Sample } from '../../../lib/api/types';
import { buildSeries, type Point } from '../../../lib/series';

export function tracePoints(samples: readonly Sample[]): Point[] {
  const measured = buildSeries(samples, null).filter((s) => !s.warmup);
  if (measured.length <= 1) return measured[0]?.points ?? [];
  // Several thread counts in one trace run (not expected): keep them in time order as one line.
  return measured.flatMap((s) => s.points).sort((a, b) => a.x - b.x);
}
