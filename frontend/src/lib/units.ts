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

/** A byte count as a form writes it: exact, no digit grouping ("8 KiB", "80 MiB", "1000000 B"). */
export function bytesInput(bytes: number): string {
  return formatBlockSize(bytes).replace(/,/g, '');
}

const SIZE_UNITS: Record<string, number> = {
  B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12,
};

/**
 * "8 KiB" → 8192, "8 KB" → 8000, "8192" → 8192. Binary and decimal prefixes are both accepted but
 * never confused; a bare "K"/"M"/"G" is refused because it could mean either.
 */
export function parseByteSize(text: string): { value: number } | { error: string } {
  const m = /^(\d+(?:\.\d+)?)\s*([A-Za-z]*)$/.exec(text.trim());
  if (!m) return { error: `"${text.trim()}" is not a size` };
  const unit = m[2] as string;
  const scale = unit === '' ? 1 : (SIZE_UNITS[unit] ?? SIZE_UNITS[unit.replace(/^k/, 'K')]);
  if (scale === undefined) {
    return { error: `"${unit}": write B, KiB, MiB or GiB (1024-based), or KB, MB, GB (1000-based)` };
  }
  const value = Number(m[1]) * scale;
  if (!Number.isInteger(value)) return { error: `${text.trim()} is not a whole number of bytes` };
  return { value };
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

// Rates before times: "sender_mbit_s" is Mbit/s, not seconds (the first match wins).
const SUFFIX_UNITS: [RegExp, string, 'time' | 'other' | 'bytes'][] = [
  [/_mbit_s$/, 'Mbit/s', 'other'],
  [/_mb_s$/, 'MB/s', 'other'],
  [/_gb_s$/, 'GB/s', 'other'],
  [/_ns$/, 'ns', 'time'],
  [/_us$/, 'µs', 'time'],
  [/_ms$/, 'ms', 'time'],
  [/_s$/, 's', 'time'],
  [/_(percent|pct)$/, '%', 'other'],
  [/_bytes$/, 'B', 'bytes'],
  [/_ghz$/, 'GHz', 'other'],
  [/_mhz$/, 'MHz', 'other'],
];

const WORDS: Record<string, string> = {
  iops: 'IOPS',
  avg: 'avg',
  cpu: 'CPU',
  gpu: 'GPU',
  sm: 'SM',
  pcie: 'PCIe',
  udp: 'UDP',
  tcp: 'TCP',
  rt: 'RT',
  mbit: 'Mbit',
};

/** Latency figures: drawn on the latency chart and shown in the cell. */
const LATENCY_KEY = /^(lat|latency|rtt)_|^(ns|us|ms)_per_load$/;
/** Other figures shown in the cell, not only in its details. */
const PRIMARY = /^(iops|loss|jitter)/;

const capitalise = (label: string) => (/^p\d/.test(label) ? label : label.charAt(0).toUpperCase() + label.slice(1));

export function extraMeta(key: string): ExtraMeta {
  // "ns_per_load": a time per unit of work (memory latency), unit in the prefix.
  const per = /^(ns|us|ms)_per_(.+)$/.exec(key);
  if (per) {
    const unit = per[1] === 'us' ? 'µs' : (per[1] as string);
    const label = capitalise(`time per ${(per[2] as string).split('_').map((w) => WORDS[w] ?? w).join(' ')}`);
    const latency = LATENCY_KEY.test(key);
    return { key, label, unit, latency, primary: latency };
  }
  // "bytes_read": a byte count, unit in the prefix.
  if (/^bytes_/.test(key)) {
    return { key, label: capitalise(`bytes ${key.slice(6).replace(/_/g, ' ')}`), unit: 'B', latency: false, primary: false };
  }
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
  if ((words[0] === 'lat' || words[0] === 'latency') && kind === 'time') {
    // lat_p99 → "p99 latency"; latency → "latency"
    const rest = words.slice(1).join(' ');
    label = rest ? `${rest} latency` : 'latency';
  } else if (words[0] === 'lat') {
    label = ['latency', ...words.slice(1)].join(' ');
  } else {
    label = words.map((w) => WORDS[w] ?? w).join(' ');
  }
  const latency = kind === 'time' && LATENCY_KEY.test(key);
  return { key, label: capitalise(label || key), unit, latency, primary: latency || PRIMARY.test(key) };
}

/** Counts of events: whole numbers. The backend averages them over repeats (144.3 preemptions), which is
 * not a count a person can have; shown rounded, "≈" when the mean was not whole. */
const COUNT_KEY = /^(preemptions|retransmits|errors|drops|lost|samples|work|ops|packets|datagrams|streams)$|_(count|errors|retransmits|preemptions)$/;

export function isCount(key: string): boolean {
  return COUNT_KEY.test(key);
}

/** A time in the unit that keeps it readable: 4.65e-4 s → "465 µs", 0.0123 s → "12.3 ms". */
export function formatTime(value: number, unit: 'ns' | 'µs' | 'ms' | 's'): string {
  const scale = { ns: 1e-9, 'µs': 1e-6, ms: 1e-3, s: 1 }[unit];
  const seconds = value * scale;
  const abs = Math.abs(seconds);
  if (abs === 0 || abs >= 1) return `${formatNumber(seconds)} s`;
  if (abs >= 1e-3) return `${formatNumber(seconds * 1e3)} ms`;
  if (abs >= 1e-6) return `${formatNumber(seconds * 1e6)} µs`;
  return `${formatNumber(seconds * 1e9)} ns`;
}

/** "12.3 µs", "0.5 %", "1,234 IOPS", "8 MiB" for byte counts, whole counts, readable times. */
export function formatExtra(key: string, value: number | null | undefined): string {
  const meta = extraMeta(key);
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  if (meta.unit === 'B') return formatBytes(value);
  if (meta.unit === '%') return `${formatNumber(value, 3)} %`;
  if (isCount(key)) {
    const whole = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 0 }).format(Math.round(value));
    return Number.isInteger(value) ? whole : `≈ ${whole} (mean over repeats)`;
  }
  if (!meta.unit) return key === 'iops' ? `${formatNumber(value)} IOPS` : formatNumber(value);
  if (meta.unit === 's' || meta.unit === 'ms' || meta.unit === 'µs' || meta.unit === 'ns') {
    // a phase time of 4.65e-4 s reads "465 µs"; latencies keep their own unit (they sit in a column)
    return meta.latency ? `${formatNumber(value)} ${meta.unit}` : formatTime(value, meta.unit);
  }
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
