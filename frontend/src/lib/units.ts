// Units as the API states them. Block sizes arrive in bytes and are shown in binary units only when
// exact (8192 → "8 KiB", never "8 KB"); a size no binary unit divides is shown in bytes. Extra
// per-row figures carry their unit in the key's suffix (`lat_p99_us`, `loss_percent`).
import { formatBytes, formatNumber } from './format';

const BINARY = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;
const LOCALE = 'en-US';

/** 8 → "8 B", 8192 → "8 KiB", 83886080 → "80 MiB", 8000 → "8,000 B" (exact, never rounded). */
export function formatBlockSize(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '—';
  if (!Number.isInteger(bytes) || bytes < 0) return `${formatNumber(bytes)} B`;
  let v = bytes;
  let i = 0;
  while (v >= 1024 && v % 1024 === 0 && i < BINARY.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${new Intl.NumberFormat(LOCALE).format(v)} ${BINARY[i]}`;
}

export interface ExtraMeta {
  key: string;
  /** Human label without the unit: "p99 latency", "IOPS", "UDP loss". */
  label: string;
  /** Display unit ('' when the key names none). */
  unit: string;
  /** A time (latency) figure: lower is better, drawn on the latency chart. */
  latency: boolean;
  /** Shown in the matrix cell itself; the rest only in the cell's details. */
  primary: boolean;
}

const SUFFIX_UNITS: [RegExp, string, 'time' | 'other' | 'bytes'][] = [
  [/_ns$/, 'ns', 'time'],
  [/_us$/, 'µs', 'time'],
  [/_ms$/, 'ms', 'time'],
  [/_s$/, 's', 'time'],
  [/_(percent|pct)$/, '%', 'other'],
  [/_bytes$/, 'B', 'bytes'],
  [/_mbit_s$/, 'Mbit/s', 'other'],
  [/_mb_s$/, 'MB/s', 'other'],
  [/_gb_s$/, 'GB/s', 'other'],
  [/_ghz$/, 'GHz', 'other'],
];

const WORDS: Record<string, string> = {
  iops: 'IOPS',
  lat: 'latency',
  avg: 'avg',
  cpu: 'CPU',
  udp: 'UDP',
  tcp: 'TCP',
  rt: 'RT',
  mbit: 'Mbit',
};

/** Keys shown in the cell, not only in the details. */
const PRIMARY = /^(iops|lat_|latency_|loss|rtt|jitter)/;

export function extraMeta(key: string): ExtraMeta {
  let unit = '';
  let base = key;
  let kind: 'time' | 'other' | 'bytes' | null = null;
  for (const [re, u, k] of SUFFIX_UNITS) {
    if (re.test(key)) {
      unit = u;
      kind = k;
      base = key.replace(re, '');
      break;
    }
  }
  const words = base.split('_').filter(Boolean);
  let label: string;
  if (words[0] === 'lat' || words[0] === 'latency') {
    // lat_p99 → "p99 latency"; latency → "latency"
    const rest = words.slice(1).join(' ');
    label = rest ? `${rest} latency` : 'latency';
  } else {
    label = words.map((w) => WORDS[w] ?? w).join(' ');
  }
  // "p99 latency" keeps its lower-case percentile; other labels start with a capital.
  if (!/^p\d/.test(label)) label = label.charAt(0).toUpperCase() + label.slice(1);
  return { key, label: label || key, unit, latency: kind === 'time', primary: PRIMARY.test(key) };
}

/** "12.3 µs", "0.5 %", "1,234 IOPS", "8 MiB" for byte counts. */
export function formatExtra(key: string, value: number | null | undefined): string {
  const meta = extraMeta(key);
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  if (meta.unit === 'B') return formatBytes(value);
  if (meta.unit === '%') return `${formatNumber(value, 3)} %`;
  if (!meta.unit) return key === 'iops' ? `${formatNumber(value)} IOPS` : formatNumber(value);
  return `${formatNumber(value)} ${meta.unit}`;
}

/** Extra keys present in any row, primary ones first, each group alphabetical. */
export function extraKeys(rows: readonly { extra?: Record<string, number> | null }[]): string[] {
  const keys = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r.extra ?? {})) keys.add(k);
  return [...keys].sort((a, b) => {
    const pa = extraMeta(a).primary ? 0 : 1;
    const pb = extraMeta(b).primary ? 0 : 1;
    return pa - pb || a.localeCompare(b);
  });
}

/** Units where a smaller figure is the better one (latencies). */
export function lowerIsBetter(unit: string): boolean {
  return /^(ns|µs|us|ms|s)$/.test(unit.trim());
}

/** "52.3 GFLOP/s" */
export function withUnit(value: number | null | undefined, unit: string, digits = 4): string {
  const n = formatNumber(value, digits);
  return n === '—' || !unit ? n : `${n} ${unit}`;
}
