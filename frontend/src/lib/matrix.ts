// A run's result rows as the matrix the kernels report: operation × block size × threads. Pure
// grouping and labelling; every figure in a cell is the backend's row, never recomputed.
import { enumLabels } from '../config/experiments';
import type { ResultRow } from './api/types';
import { FIELD_AXES, countWords, type Axes } from './axes';
import { formatBlockSize } from './units';

/** A cell's coordinates: the result row's own fields (generated from the OpenAPI document), not retyped. */
export type CellRef = Pick<ResultRow, 'op' | 'block_bytes' | 'threads'>;

export interface OpMatrix {
  op: string | null;
  /** The unit of this operation's mean (rows of one op share it). */
  unit: string;
  /** Block sizes in ascending order; [null] when the operation has none (CPU). */
  blocks: (number | null)[];
  threads: number[];
  rows: ResultRow[];
}

export function cellKey(c: CellRef): string {
  return `${c.op ?? ''}|${c.block_bytes ?? ''}|${c.threads}`;
}

export function opLabel(op: string | null | undefined): string {
  if (!op) return '—';
  return enumLabels.op?.[op] ?? op;
}

/** "4 threads", or in the run's words: "1 stream". */
export function threadsLabel(n: number, a: Axes = FIELD_AXES): string {
  return countWords(a, n);
}

/** "FP64 FLOPS · 8 KiB · 4 threads" (parts that do not vary can be left out). */
export function cellLabel(c: CellRef, show: { op?: boolean; block?: boolean; threads?: boolean } = {}): string {
  const parts: string[] = [];
  if (show.op !== false) parts.push(opLabel(c.op));
  if (show.block !== false && c.block_bytes !== null && c.block_bytes !== undefined) parts.push(formatBlockSize(c.block_bytes));
  if (show.threads !== false) parts.push(threadsLabel(c.threads));
  return parts.join(' · ');
}

const byBlock = (a: number | null, b: number | null) => (a ?? -1) - (b ?? -1);

/** Rows grouped by operation (in the backend's order), each with its block sizes and thread counts. */
export function groupMatrix(rows: readonly ResultRow[]): OpMatrix[] {
  const byOp = new Map<string, OpMatrix>();
  for (const row of rows) {
    const key = row.op ?? '';
    let m = byOp.get(key);
    if (!m) {
      m = { op: row.op ?? null, unit: row.unit, blocks: [], threads: [], rows: [] };
      byOp.set(key, m);
    }
    m.rows.push(row);
    const block = row.block_bytes ?? null;
    if (!m.blocks.includes(block)) m.blocks.push(block);
    if (!m.threads.includes(row.threads)) m.threads.push(row.threads);
  }
  for (const m of byOp.values()) {
    m.blocks.sort(byBlock);
    m.threads.sort((a, b) => a - b);
  }
  return [...byOp.values()];
}

/** The row of one cell, if the run measured it. */
export function findCell(m: OpMatrix, block: number | null, threads: number): ResultRow | undefined {
  return m.rows.find((r) => (r.block_bytes ?? null) === block && r.threads === threads);
}

/** True when the matrix has real block sizes (memory, disk, network), not just CPU's none. */
export function hasBlocks(m: OpMatrix): boolean {
  return m.blocks.some((b) => b !== null);
}
