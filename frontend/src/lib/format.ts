// Formatting only: numbers come from the backend and are never recomputed here.
const LOCALE = 'en-US';

export function formatNumber(v: number | null | undefined, digits = 4): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  // Small figures keep their significant digits without exponent notation (0.000465, not 4.65e-4);
  // below 1e-6 the unit should change instead (formatTime), and the exponent is the honest fallback.
  if (v !== 0 && Math.abs(v) < 1e-6) return v.toExponential(2);
  return new Intl.NumberFormat(LOCALE, { maximumSignificantDigits: digits }).format(v);
}

/** Fixed decimals, for values that belong together in a column (mean ± stddev). */
export function formatFixed(v: number | null | undefined, decimals: number): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  return new Intl.NumberFormat(LOCALE, { minimumFractionDigits: decimals, maximumFractionDigits: decimals }).format(v);
}

/** "47.67 ± 0.12": a mean and its sample standard deviation, to `decimals`; one repeat has no spread to state,
 * so it reads "47.67 (one repeat)" rather than a "± 0.00" that claims a precision nobody measured. */
export function formatMeanSd(mean: number | null | undefined, stddev: number | null | undefined, n: number | null | undefined, decimals: number): string {
  if (n !== null && n !== undefined && n < 2) return `${formatFixed(mean, decimals)} (one repeat)`;
  return `${formatFixed(mean, decimals)} ± ${formatFixed(stddev, decimals)}`;
}

/** Decimals that show ~4 significant digits of the larger of the values. */
export function decimalsFor(...values: (number | null | undefined)[]): number {
  const max = Math.max(0, ...values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v)).map(Math.abs));
  if (max === 0) return 2;
  return Math.min(6, Math.max(0, 3 - Math.floor(Math.log10(max))));
}

export function formatPercent(fraction: number | null | undefined): string {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) return '—';
  return `${new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 1 }).format(fraction * 100)} %`;
}

export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h) return `${h} h ${m} min`;
  if (m) return sec ? `${m} min ${sec} s` : `${m} min`;
  return `${sec} s`;
}

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${formatNumber(v, 3)} ${units[i]}`;
}

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(LOCALE, { dateStyle: 'medium', timeStyle: 'medium' });
}

export function formatRelative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((now - t) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

export function humanize(name: string): string {
  const unitSuffix = /_(s|ms|mb|bytes)$/i.exec(name);
  const base = unitSuffix ? name.slice(0, -unitSuffix[0].length) : name;
  const words = base.replace(/_/g, ' ').trim();
  const label = words.charAt(0).toUpperCase() + words.slice(1);
  return unitSuffix ? `${label} (${unitSuffix[1]})` : label;
}

/** "op=fp64 threads=1,2 repeats=3" — a run's parameters on one line; an object value (the server's
 * reference_ports) as compact JSON, not "[object Object]". */
export function paramSummary(params: unknown): string {
  if (typeof params !== 'object' || params === null) return '';
  const one = (v: unknown): string =>
    typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
  return Object.entries(params as Record<string, unknown>)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.map(one).join(',') : one(v)}`)
    .join(' ');
}
