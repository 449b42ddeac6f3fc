// What the report page reads from its URL and how it words a row: nothing here recomputes a figure; a flagged
// figure is never called valid (its flags' words are the backend's, app/results/verdict.py).
import type { ResultRow } from '../../../lib/api/types';
import { formatNumber } from '../../../lib/format';
import { referenceLine } from '../../../lib/references';

export interface ReportSelection {
  runs?: string;
  job?: number;
  suite?: number;
}

/** ?runs=1,2,3, ?job=7 or ?suite=3 (a suite run: every run of it), exactly one; null when none names a set. */
export function readSelection(search: string): ReportSelection | null {
  const q = new URLSearchParams(search);
  const runs = q.get('runs');
  const job = q.get('job');
  const suite = q.get('suite');
  if ([runs, job, suite].filter((x) => x !== null).length !== 1) return null;
  if (runs && /^\d{1,12}(,\d{1,12})*$/.test(runs)) return { runs };
  if (job && /^\d{1,12}$/.test(job)) return { job: Number(job) };
  if (suite && /^\d{1,12}$/.test(suite)) return { suite: Number(suite) };
  return null;
}

export function reportPath(sel: { runs?: readonly number[]; job?: number; suite?: number }): string {
  if (sel.suite !== undefined) return `/report?suite=${sel.suite}`;
  return sel.job !== undefined ? `/report?job=${sel.job}` : `/report?runs=${(sel.runs ?? []).join(',')}`;
}

/** The row's verdict in words, every reason with it. */
export function verdictWords(row: Pick<ResultRow, 'verdict' | 'flags'>): string {
  const flags = row.flags ?? [];
  if (!flags.length) return row.verdict === 'valid' || row.verdict === undefined ? 'valid' : String(row.verdict);
  return `${row.verdict === 'invalid' ? 'invalid' : 'caution'}: ${flags.map((f) => f.text).join('; ')}`;
}

/** The peak and its arithmetic, or why there is none. */
export function peakWords(row: Pick<ResultRow, 'peak'>, note?: string | null): string {
  if (!row.peak) return note ? `no peak: ${note}` : 'no peak';
  return `${formatNumber(row.peak.value)} ${row.peak.unit} = ${row.peak.formula} (${row.peak.source})`;
}

/** Ours beside each reference tool: its name, its figure with unit, ours / theirs, its note; or why it gave none. */
export function referenceWords(row: Pick<ResultRow, 'references'>): string {
  const refs = row.references ?? [];
  if (!refs.length) return 'none run';
  return refs.map(referenceLine).join('; ');
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);
const bytes = (b: unknown): string | null =>
  typeof b === 'number' ? (b >= 2 ** 30 ? `${formatNumber(b / 2 ** 30, 3)} GiB` : b >= 2 ** 20 ? `${formatNumber(b / 2 ** 20, 3)} MiB` : `${formatNumber(b / 1024, 3)} KiB`) : null;

/** The machine inventory in words, as the runner reported it; a missing fact stays '—'. */
export function inventoryFacts(inventory: unknown): [string, string][] {
  const inv = obj(inventory);
  const cpu = obj(inv.cpu);
  const mem = obj(inv.memory);
  const os = obj(inv.os);
  const caches = (['l1d_bytes', 'l2_bytes', 'l3_bytes'] as const)
    .map((k) => (bytes(cpu[k]) ? `${k.replace('_bytes', '').toUpperCase()} ${bytes(cpu[k])}` : null))
    .filter(Boolean);
  const dimms = mem.channels && mem.speed_mts ? `, ${String(mem.channels)} channels × ${String(mem.speed_mts)} MT/s` : '';
  return [
    ['CPU', [cpu.model ?? cpu.model_name ?? '—', cpu.sockets ? `${String(cpu.sockets)} socket(s)` : null, cpu.threads ? `${String(cpu.threads)} threads` : null, cpu.best_isa ? `best ISA ${String(cpu.best_isa)}` : null].filter(Boolean).join(', ')],
    ['Caches', caches.join(', ') || '—'],
    ['Memory', `${bytes(mem.total_bytes) ?? '—'}${dimms}`],
    ['Disks', list(obj(inv.disks).devices).map((d) => [d.name, d.model, bytes(d.size_bytes)].filter(Boolean).join(' ')).join(', ') || '—'],
    ['NICs', list(obj(inv.nics).interfaces).map((n) => `${String(n.name)}${n.speed_mbps ? ` ${String(n.speed_mbps)} Mbit/s` : ''}${n.loopback ? ' (loopback)' : ''}`).join(', ') || '—'],
    ['OS', [os.distribution, os.system, os.kernel, os.arch].filter(Boolean).join(' ') || '—'],
  ];
}
