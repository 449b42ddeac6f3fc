// Comparison of runs: the union of their matrix cells, each run's backend row in each cell, and the
// ratio of its mean to the baseline run's mean. Only the ratio is computed here (a division of two
// backend means); efficiency and validity stay the backend's.
import { COMPARE_MAX_RUNS } from '../../../config/paths';
import type { ResultRow, RunPublic } from '../../../lib/api/types';
import { cellKey, cellLabel, type CellRef } from '../../../lib/matrix';
import { lowerIsBetter } from '../../../lib/units';

export interface CompareSelection {
  ids: number[];
  baseline: number | null;
}

/** `?runs=3,1,2&baseline=1` → ids in the given order (distinct, at most 10) and a baseline among them. */
export function readSelection(search: URLSearchParams): CompareSelection {
  const ids: number[] = [];
  for (const part of (search.get('runs') ?? '').split(',')) {
    const s = part.trim();
    if (!/^\d{1,12}$/.test(s)) continue;
    const id = Number(s);
    if (id > 0 && !ids.includes(id) && ids.length < COMPARE_MAX_RUNS) ids.push(id);
  }
  const b = Number(search.get('baseline'));
  const baseline = ids.includes(b) ? b : (ids[0] ?? null);
  return { ids, baseline };
}

export function writeSelection(search: URLSearchParams, sel: CompareSelection): URLSearchParams {
  const next = new URLSearchParams(search);
  if (sel.ids.length) next.set('runs', sel.ids.join(','));
  else next.delete('runs');
  if (sel.baseline !== null && sel.ids.includes(sel.baseline)) next.set('baseline', String(sel.baseline));
  else next.delete('baseline');
  return next;
}

export interface RatioCell {
  row: ResultRow | null;
  /** mean / baseline mean; null when either is missing, the units differ, or the baseline is 0. */
  ratio: number | null;
}

export interface RatioLine {
  key: string;
  cell: CellRef;
  label: string;
  unit: string;
  lowerIsBetter: boolean;
  byRun: RatioCell[];
}

export interface RatioTable {
  runs: RunPublic[];
  baselineIndex: number;
  lines: RatioLine[];
}

/** The cells of every run (first run's order first), each with every run's row and its ratio. */
export function ratioTable(runs: readonly RunPublic[], baselineId: number | null): RatioTable {
  const baselineIndex = Math.max(0, runs.findIndex((r) => r.id === baselineId));
  const cells = new Map<string, { cell: CellRef; unit: string }>();
  const rowsByRun = runs.map((run) => {
    const m = new Map<string, ResultRow>();
    for (const row of run.result?.rows ?? []) {
      const key = cellKey(row);
      m.set(key, row);
      if (!cells.has(key)) cells.set(key, { cell: { op: row.op ?? null, block_bytes: row.block_bytes ?? null, threads: row.threads }, unit: row.unit });
    }
    return m;
  });
  const all = [...cells.values()].map((c) => c.cell);
  const vary = {
    op: new Set(all.map((c) => c.op)).size > 1 || all.some((c) => c.op),
    block: all.some((c) => c.block_bytes !== null && c.block_bytes !== undefined),
    threads: true,
  };
  const lines: RatioLine[] = [...cells.entries()].map(([key, { cell, unit }]) => {
    const base = rowsByRun[baselineIndex]?.get(key) ?? null;
    return {
      key,
      cell,
      label: cellLabel(cell, vary),
      unit,
      lowerIsBetter: lowerIsBetter(unit),
      byRun: rowsByRun.map((m) => {
        const row = m.get(key) ?? null;
        const ratio = row && base && row.unit === base.unit && base.mean !== 0 ? row.mean / base.mean : null;
        return { row, ratio };
      }),
    };
  });
  return { runs: [...runs], baselineIndex, lines };
}

export function runLabel(run: RunPublic, instance?: string | null): string {
  return `#${run.id} ${run.host_name}${instance ? ` (${instance})` : ''}`;
}

/** Units present, in first-seen order: one bar chart per unit. */
export function unitsOf(table: RatioTable): string[] {
  return [...new Set(table.lines.map((l) => l.unit))];
}
