// A reference tool beside one of our rows, in words: its own figure, how its run differs from the row (note),
// or why it gave none (no tool measures the row, the tool is missing and the package that brings it, it
// failed). The backend says all of it (app/results/schemas.py ReferenceFigure); nothing is inferred here.
import { referenceToolLabels } from '../config/experiments';
import type { ResultRow } from './api/types';
import { formatNumber } from './format';

export type ReferenceFigure = NonNullable<ResultRow['references']>[number];

export function referenceName(tool: string): string {
  return referenceToolLabels[tool] ?? tool;
}

/** The tool's own figure with its unit ("50 GFLOP/s"), or null when it gave none. */
export function referenceValue(r: ReferenceFigure): string | null {
  return r.status === 'ok' && r.value !== null && r.value !== undefined ? `${formatNumber(r.value)} ${r.unit ?? ''}`.trim() : null;
}

/** Why a reference gave no figure, as the row says it. */
export function referenceWhyNot(r: ReferenceFigure): string {
  const why = r.reason ? `: ${r.reason}` : '';
  // the runner's sentence already says it ("no reference tool measures int32: ..."): shown as it is
  if (r.status === 'none') return r.reason ? capitalise(r.reason) : 'No reference tool measures this row';
  if (r.status === 'failed') return `${referenceName(r.tool)} failed${why}`;
  if (r.status === 'unavailable') return `${referenceName(r.tool)} unavailable on this host${why}`;
  return `${referenceName(r.tool)} reported no figure${why}`;
}

/** One reference in full words, for the details and the report: "fio: 1,200 MB/s (ours / theirs 0.95)". */
export function referenceLine(r: ReferenceFigure): string {
  const note = r.note ? ` [${r.note}]` : '';
  const value = referenceValue(r);
  if (value !== null) {
    const ratio = r.ratio !== null && r.ratio !== undefined ? ` (ours / theirs ${formatNumber(r.ratio, 3)})` : '';
    return `${r.tool}: ${value}${ratio}${note}`;
  }
  if (r.status === 'none') return r.reason ?? 'no reference tool measures this row';
  return `${r.tool}: ${r.status}${r.reason ? ` (${r.reason})` : ''}${note}`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
