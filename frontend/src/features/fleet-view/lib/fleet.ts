// How a fleet cell looks: coloured by efficiency against its peak (where a peak exists), an outlier
// among its label's hosts marked, a figure that is not valid said so. Pure, tested without a DOM.
import { formatNumber } from '../../../lib/format';
import type { FleetCell, FleetPublic } from '../api/fleet';

/** Efficiency bands, fraction of the peak: at least `min` gets `tone`. */
export const EFFICIENCY_BANDS = [
  { min: 0.75, tone: 'high', label: '≥ 75 % of peak' },
  { min: 0.5, tone: 'mid', label: '50–75 % of peak' },
  { min: 0.25, tone: 'low', label: '25–50 % of peak' },
  { min: 0, tone: 'poor', label: '< 25 % of peak' },
] as const;
export type Tone = (typeof EFFICIENCY_BANDS)[number]['tone'] | 'none';

export function toneOf(efficiency: number | null | undefined): Tone {
  if (efficiency == null || !Number.isFinite(efficiency)) return 'none';
  return EFFICIENCY_BANDS.find((b) => efficiency >= b.min)?.tone ?? 'poor';
}

/** Light and dark backgrounds per tone (readable with the theme's text colour). */
export const TONE_COLORS: Record<Tone, { light: string; dark: string }> = {
  high: { light: '#bbf7d0', dark: '#14532d' },
  mid: { light: '#d9f99d', dark: '#3f6212' },
  low: { light: '#fde68a', dark: '#713f12' },
  poor: { light: '#fecaca', dark: '#7f1d1d' },
  none: { light: 'transparent', dark: 'transparent' },
};

export function cellText(c: FleetCell): string {
  const eff = c.efficiency != null ? ` · ${(c.efficiency * 100).toFixed(0)} %` : '';
  return `${formatNumber(c.value)} ${c.unit}${eff}`;
}

export function cellTitle(c: FleetCell): string {
  const parts = [`run ${c.run_id}, ${c.threads} thread${c.threads === 1 ? '' : 's'}`];
  if (c.efficiency != null) parts.push(`${(c.efficiency * 100).toFixed(1)} % of its peak`);
  else parts.push('no peak to set it against');
  if (c.verdict === 'loopback') parts.push('loopback: the network stack in memory, no NIC');
  else if (c.verdict !== 'valid') parts.push(`verdict ${c.verdict}: not judged`);
  if (c.outlier && c.outlier_note) parts.push(`outlier: ${c.outlier_note}`);
  return parts.join('; ');
}

/** An empty cell: why the host has no headline figure there ("no valid run yet; 3 disturbed"), or a dash. */
export function missingText(h: Pick<FleetPublic['hosts'][number], 'missing'>, key: string): string {
  return h.missing?.[key] ?? '—';
}

/** The headline columns that have at least one figure, or a host with runs none of which is valid (a metric
 * nobody measured is left out). */
export function shownMetrics(f: FleetPublic): FleetPublic['metrics'] {
  return f.metrics.filter((m) => f.hosts.some((h) => h.cells[m.key] || h.missing?.[m.key]));
}

export function outlierCount(f: FleetPublic): number {
  return f.hosts.reduce((n, h) => n + Object.values(h.cells).filter((c) => c?.outlier).length, 0);
}
