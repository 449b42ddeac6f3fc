// What the trend page draws, from the series answer: the valid points (the detector's input), the
// points it left out (drawn hollow, with their reason), the 95 % CI band, change markers and
// threshold lines. Pure, so it is tested without a canvas.
import type { Experiment } from '../../../lib/api/types';
import { axesOf, countWords } from '../../../lib/axes';
import { formatNumber } from '../../../lib/format';
import { opLabel } from '../../../lib/matrix';
import { formatBlockSize } from '../../../lib/units';
import type { ChangePublic, ScopeQuery, SeriesPublic, ThresholdPublic } from '../api/trends';

export interface MetricKey {
  experiment: string;
  op: string | null;
  threads: number;
  block_bytes?: number | null;
}

export type LabelKey = 'provider' | 'instance_type' | 'region';
export const LABEL_KEYS: readonly LabelKey[] = ['provider', 'instance_type', 'region'];

export type Scope = { host: number } | { label: LabelKey; value: string };

/** The scope in the URL: ?host=3 or ?label=instance_type:m5.large. */
export function readScope(search: URLSearchParams): Scope | null {
  const host = Number(search.get('host'));
  if (Number.isInteger(host) && host > 0) return { host };
  const label = search.get('label');
  if (!label) return null;
  const i = label.indexOf(':');
  const key = label.slice(0, i) as LabelKey;
  const value = label.slice(i + 1);
  return i > 0 && LABEL_KEYS.includes(key) && value ? { label: key, value } : null;
}

export function writeScope(scope: Scope): string {
  return 'host' in scope ? `host=${scope.host}` : `label=${encodeURIComponent(`${scope.label}:${scope.value}`)}`;
}

export function scopeQuery(scope: Scope): ScopeQuery {
  return 'host' in scope ? { host_id: scope.host } : { [scope.label]: scope.value };
}

/** A metric as one URL value: experiment|op|threads|block. */
export function encodeMetric(m: MetricKey): string {
  return [m.experiment, m.op ?? '', m.threads, m.block_bytes ?? ''].join('|');
}

export function decodeMetric(s: string | null): MetricKey | null {
  if (!s) return null;
  const [experiment, op, threads, block] = s.split('|');
  const t = Number(threads);
  const b = block ? Number(block) : null;
  if (!experiment || !Number.isInteger(t) || t < 1 || (b !== null && !(Number.isInteger(b) && b > 0))) return null;
  return { experiment, op: op || null, threads: t, block_bytes: b };
}

export type NamingExperiment = Pick<Experiment, 'title' | 'run_kinds' | 'axes' | 'axes_by_op'>;

/** A metric in words: "Network (loopback): TCP throughput, 1 B messages, 1 stream", "CPU throughput: FP64 FLOPS,
 * 4 threads"; the experiment's title and its rows' words (lib/axes.ts) once the experiments are known. */
export function metricLabel(m: MetricKey, experiments?: readonly NamingExperiment[]): string {
  const e = experiments?.find((x) => x.run_kinds.includes(m.experiment));
  const a = axesOf(experiments, m.experiment)(m.op);
  const parts = [m.op ? opLabel(m.op) : null, m.block_bytes ? `${formatBlockSize(m.block_bytes)} ${a.sized}` : null, countWords(a, m.threads)];
  return `${e?.title ?? m.experiment}: ${parts.filter(Boolean).join(', ')}`;
}

/** 1 → "1 run", 3 → "3 runs". */
export function runsWords(n: number): string {
  return `${n} run${n === 1 ? '' : 's'}`;
}

export interface XY {
  x: number;
  y: number;
}

export interface ThresholdLine {
  id: number;
  y: number;
  label: string;
}

export interface TrendChartData {
  used: XY[];
  excluded: XY[];
  ciLow: XY[];
  ciHigh: XY[];
  changes: { x: number; label: string }[];
  thresholds: ThresholdLine[];
}

function median(values: number[]): number | null {
  if (!values.length) return null;
  const s = [...values].sort((a, b) => a - b);
  const k = Math.floor(s.length / 2);
  return s.length % 2 ? (s[k] as number) : ((s[k - 1] as number) + (s[k] as number)) / 2;
}

/** Where a threshold sits on the chart: a value as it is; a drop as that many % worse than the
 * median of the newest ten valid points (what the server compares with). */
export function thresholdY(t: ThresholdPublic, s: SeriesPublic): number | null {
  if (t.kind !== 'drop_pct') return t.value;
  const base = median(s.points.filter((p) => p.used).slice(-10).map((p) => p.mean));
  if (base === null) return null;
  return s.lower_is_better ? base * (1 + t.value / 100) : base * (1 - t.value / 100);
}

export function thresholdText(t: ThresholdPublic, unit: string): string {
  if (t.kind === 'below') return `below ${formatNumber(t.value)} ${unit}`;
  if (t.kind === 'above') return `above ${formatNumber(t.value)} ${unit}`;
  return `worse by more than ${formatNumber(t.value)} % than the median of the previous 10 valid runs`;
}

export function changeText(c: ChangePublic, unit: string): string {
  const pct = `${c.effect > 0 ? '+' : ''}${(c.effect * 100).toFixed(1)} %`;
  return `${c.kind}: ${formatNumber(c.before)} → ${formatNumber(c.after)} ${unit} (${pct}, p = ${c.p_value.toPrecision(2)})`;
}

export function trendChart(s: SeriesPublic): TrendChartData {
  const t = (iso: string) => Date.parse(iso);
  const withCi = s.points.filter((p) => p.ci95_low != null && p.ci95_high != null);
  return {
    used: s.points.filter((p) => p.used).map((p) => ({ x: t(p.at), y: p.mean })),
    excluded: s.points.filter((p) => !p.used).map((p) => ({ x: t(p.at), y: p.mean })),
    ciLow: withCi.map((p) => ({ x: t(p.at), y: p.ci95_low as number })),
    ciHigh: withCi.map((p) => ({ x: t(p.at), y: p.ci95_high as number })),
    changes: s.changes.map((c) => ({ x: t(c.at), label: c.kind === 'regression' ? 'regression' : 'improvement' })),
    thresholds: s.thresholds.flatMap((th) => {
      const y = thresholdY(th, s);
      return y === null ? [] : [{ id: th.id, y, label: thresholdText(th, s.unit) }];
    }),
  };
}
