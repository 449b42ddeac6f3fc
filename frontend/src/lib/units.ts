// Units as the API states them. Block sizes arrive in bytes and are shown in binary units only when
// exact (8192 → "8 KiB", never "8 KB"); a size no binary unit divides is shown in bytes. A row's
// extra figures come with their units and which are latencies (`extra_units`,
// `extra_lower_is_better`), as the kernel that wrote them declares them (`hbk <kernel> --describe`
// "results"): nothing is guessed from a key's spelling, which only gives the label.
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
  /** Display unit, as the kernel declares it ('' when it declares none, or does not declare the figure). */
  unit: string;
  /** A latency (declared lower is better, in a unit of time): drawn on the latency chart. A share the kernel
   * declares lower is better (wait_share, a fraction) is not a latency. */
  latency: boolean;
  /** Shown in the matrix cell itself; the rest only in the cell's details. */
  primary: boolean;
}

/** What a result row says about its extra figures (ResultRow's extra_units, extra_lower_is_better). */
export interface ExtraUnits {
  extra_units?: Record<string, string> | null;
  extra_lower_is_better?: readonly string[] | null;
}

/** A row with its extra figures (ResultRow fits). */
export type ExtraRow = ExtraUnits & { extra?: Record<string, number> | null };

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

/** Other figures shown in the cell, not only in its details (latencies always are). */
const PRIMARY = /^(iops|loss|jitter)/;
const TIME_UNITS = new Set(['ns', 'µs', 'ms', 's']);

const capitalise = (label: string) => (/^p\d/.test(label) ? label : label.charAt(0).toUpperCase() + label.slice(1));

/** How a key spells its declared unit at its end, to leave it out of the label: "Mbit/s" → _mbit_s, "µs" → _us. */
function unitSuffixes(unit: string): string[] {
  if (unit === '%') return ['_pct', '_percent'];
  if (unit === 'B') return ['_bytes'];
  const spelled = unit.toLowerCase().replace(/µ/g, 'u').replace(/\//g, '_').replace(/\s+/g, '');
  return spelled ? [`_${spelled}`] : [];
}

/** A figure's label from its key, its unit and latency-ness from the row (the kernel's declaration). */
export function extraMeta(key: string, row?: ExtraUnits | null): ExtraMeta {
  const unit = row?.extra_units?.[key] ?? '';
  const latency = (row?.extra_lower_is_better?.includes(key) ?? false) && TIME_UNITS.has(unit);
  const primary = latency || PRIMARY.test(key);
  // "ns_per_load": a time per unit of work (memory latency).
  const per = /^(ns|us|ms)_per_(.+)$/.exec(key);
  if (per) {
    const label = capitalise(`time per ${(per[2] as string).split('_').map((w) => WORDS[w] ?? w).join(' ')}`);
    return { key, label, unit, latency, primary };
  }
  // "bytes_read": a byte count.
  if (/^bytes_/.test(key)) {
    return { key, label: capitalise(`bytes ${key.slice(6).replace(/_/g, ' ')}`), unit, latency, primary };
  }
  const suffix = unitSuffixes(unit).find((s) => key.endsWith(s) && key.length > s.length);
  const base = suffix ? key.slice(0, -suffix.length) : key;
  const words = base.split('_').filter(Boolean);
  let label: string;
  if ((words[0] === 'lat' || words[0] === 'latency') && TIME_UNITS.has(unit)) {
    // lat_p99 → "p99 latency"; latency → "latency"
    const rest = words.slice(1).join(' ');
    label = rest ? `${rest} latency` : 'latency';
  } else if (words[0] === 'lat') {
    label = ['latency', ...words.slice(1)].join(' ');
  } else {
    label = words.map((w) => WORDS[w] ?? w).join(' ');
    // The unit was the key's last word: say what kind of figure is left, or "sender_bytes" and "sender_mbit_s" would
    // both read "Sender" (issue 32)
    if (suffix && label && unit === 'B') label += ' bytes';
    else if (suffix && label && unit.endsWith('/s')) label += ' throughput';
  }
  return { key, label: capitalise(label || key), unit, latency, primary };
}

/** The figure as the first of the rows that has it declares it (rows of one run share their kernel). */
export function extraMetaIn(rows: readonly ExtraRow[], key: string): ExtraMeta {
  return extraMeta(key, rows.find((r) => r.extra && key in r.extra));
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

/** "12.3 µs", "0.5 %", "1,234 IOPS", "8 MiB" for byte counts, whole counts, readable times: in the unit the row
 * declares for the figure. */
export function formatExtra(key: string, value: number | null | undefined, row?: ExtraUnits | null): string {
  const meta = extraMeta(key, row);
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  if (meta.unit === 'B') return formatBytes(value);
  if (meta.unit === '%') return `${formatNumber(value, 3)} %`;
  if (isCount(key)) {
    const whole = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 0 }).format(Math.round(value));
    return Number.isInteger(value) ? whole : `≈ ${whole} (mean over repeats)`;
  }
  if (!meta.unit) return formatNumber(value);
  if (meta.unit === 's' || meta.unit === 'ms' || meta.unit === 'µs' || meta.unit === 'ns') {
    // a phase time of 4.65e-4 s reads "465 µs"; latencies keep their own unit (they sit in a column)
    return meta.latency ? `${formatNumber(value)} ${meta.unit}` : formatTime(value, meta.unit);
  }
  return `${formatNumber(value)} ${meta.unit}`;
}

/** Extra keys present in any row, primary ones first, each group alphabetical. */
export function extraKeys(rows: readonly ExtraRow[]): string[] {
  const keys = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r.extra ?? {})) keys.add(k);
  const primary = (k: string) => (extraMetaIn(rows, k).primary ? 0 : 1);
  return [...keys].sort((a, b) => primary(a) - primary(b) || a.localeCompare(b));
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
