// Result matrix → grouped bar series. Throughput: mean with ± stddev whiskers, grouped by block size
// (one colour per thread count) or, without block sizes, by thread count. Latency: the rows' latency
// extras (p50, p99, … averaged over repeats by the backend; latencies as the kernel declares them),
// one colour per percentile.
import type { BarSeries } from '../../../components/chart/GroupedBarChart';
import { stddevBar } from '../../../components/chart/plugins/error-bars';
import type { ChartMarker } from '../../../components/chart/plugins/markers';
import type { ResultRow, RunResult } from '../../../lib/api/types';
import { formatNumber, formatPercent } from '../../../lib/format';
import { findCell, hasBlocks, threadsLabel, type OpMatrix } from '../../../lib/matrix';
import { FIELD_AXES, countWords, type Axes } from '../../../lib/axes';
import { extraMetaIn, formatBlockSize } from '../../../lib/units';

export interface BarChartData {
  categories: string[];
  series: BarSeries[];
  xTitle: string;
  unit: string;
}

/** Tooltip lines for one figure: spread, CI, efficiency, validity. */
export function rowNotes(row: ResultRow): string[] {
  const notes = [`min ${formatNumber(row.min)} · max ${formatNumber(row.max)} · n ${row.n}`];
  if (row.ci95_low !== null && row.ci95_high !== null) notes.push(`95 % CI ${formatNumber(row.ci95_low)} – ${formatNumber(row.ci95_high)}`);
  if (row.efficiency !== null) notes.push(`${formatPercent(row.efficiency)} of peak`);
  if (row.level) notes.push(`working set fits in ${row.level}`);
  if (!row.valid) notes.push(`invalid: ${row.invalid_reason ?? 'no reason given'}`);
  return notes;
}

function cells(m: OpMatrix, a: Axes): { categories: string[]; xTitle: string; pick: (cat: number, ser: number) => ResultRow | undefined; seriesLabels: string[] } {
  if (hasBlocks(m)) {
    const multi = m.threads.length > 1;
    return {
      categories: m.blocks.map((b) => formatBlockSize(b)),
      xTitle: a.size,
      seriesLabels: m.threads.map((t) => (multi ? threadsLabel(t, a) : `${threadsLabel(t, a)} (${m.unit})`)),
      pick: (c, s) => findCell(m, m.blocks[c] ?? null, m.threads[s] as number),
    };
  }
  return {
    categories: m.threads.map((t) => threadsLabel(t, a)),
    xTitle: a.counts,
    seriesLabels: ['mean ± stddev'],
    pick: (c) => findCell(m, null, m.threads[c] as number),
  };
}

/** `a`: what the rows' threads and block sizes are (lib/axes.ts): streams and message sizes for network. */
export function throughputBars(m: OpMatrix, a: Axes = FIELD_AXES): BarChartData {
  const { categories, xTitle, pick, seriesLabels } = cells(m, a);
  const series: BarSeries[] = seriesLabels.map((label, s) => {
    const rows = categories.map((_, c) => pick(c, s));
    return {
      label,
      values: rows.map((r) => r?.mean ?? null),
      errors: rows.map((r) => (r ? stddevBar(r.mean, r.stddev) : null)),
      invalid: rows.map((r) => (r ? !r.valid : false)),
      notes: rows.map((r) => (r ? rowNotes(r) : null)),
    };
  });
  return { categories, series, xTitle, unit: m.unit };
}

/**
 * The host's detected cache sizes as lines on a block-size axis: each between the two block sizes around it,
 * by log size (the bars stand for sizes growing by ratios), on a bar when it equals one. A size outside the
 * blocks measured is left out: there is no bar to set it against.
 */
export function cacheMarkers(blocks: readonly (number | null)[], caches: RunResult['caches'] | undefined): ChartMarker[] {
  const sizes = blocks.filter((b): b is number => b !== null && b > 0);
  const out: ChartMarker[] = [];
  for (const [level, bytes] of Object.entries(caches ?? {})) {
    if (!bytes || bytes <= 0) continue;
    const i = sizes.findIndex((b, j) => b <= bytes && (sizes[j + 1] ?? Infinity) >= bytes);
    if (i < 0) continue;
    const lo = sizes[i] as number;
    const hi = sizes[i + 1];
    if (hi === undefined && bytes > lo) continue;
    const x = hi === undefined || bytes === lo ? i : i + Math.log(bytes / lo) / Math.log(hi / lo);
    out.push({ x, label: `${level} ${formatBlockSize(bytes)}`, kind: 'config' });
  }
  return out;
}

/** Latency extras of one operation, grouped by their unit; null when the rows carry none. */
export function latencyBars(m: OpMatrix, a: Axes = FIELD_AXES): BarChartData | null {
  const keys = [...new Set(m.rows.flatMap((r) => Object.keys(r.extra ?? {})))].filter((k) => extraMetaIn(m.rows, k).latency).sort(byPercentile);
  if (!keys.length) return null;
  const unit = extraMetaIn(m.rows, keys[0] as string).unit;
  const sameUnit = keys.filter((k) => extraMetaIn(m.rows, k).unit === unit);
  const blocks = hasBlocks(m);
  const combos = blocks ? m.blocks.flatMap((b) => m.threads.map((t) => [b, t] as const)) : m.threads.map((t) => [null, t] as const);
  const present = combos.filter(([b, t]) => findCell(m, b, t));
  const categories = present.map(([b, t]) =>
    blocks ? (m.threads.length > 1 ? `${formatBlockSize(b)} · ${countWords(a, t)}` : formatBlockSize(b)) : threadsLabel(t, a),
  );
  const series = sameUnit.map((k) => {
    const rows = present.map(([b, t]) => findCell(m, b, t));
    return {
      label: extraMetaIn(m.rows, k).label,
      values: rows.map((r) => r?.extra?.[k] ?? null),
      invalid: rows.map((r) => (r ? !r.valid : false)),
    };
  });
  return { categories, series, xTitle: blocks ? a.size : a.counts, unit };
}

const ORDER = ['min', 'avg', 'mean', 'p50', 'p90', 'p95', 'p99', 'p999', 'max'];
function byPercentile(a: string, b: string): number {
  const rank = (k: string) => {
    const words = k.split('_');
    const i = ORDER.findIndex((w) => words.includes(w));
    return i < 0 ? ORDER.length : i;
  };
  return rank(a) - rank(b) || a.localeCompare(b);
}
