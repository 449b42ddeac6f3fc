// History as a file: every run matching the page's filters (all pages, fetched 200 at a time from the
// same server-side filter), one line per run with its headline, unit and verdict. The figures are the
// backend's; a run's full result and samples are in its own export (Run page).
import { toCsv, type CsvValue } from '../../../lib/csv';
import type { RunPublic, RunsPublic, RunsQuery } from '../../../lib/api/types';
import { paramSummary } from '../../../lib/format';
import { headline } from '../components/HistoryTable';

export const HISTORY_COLUMNS = [
  'run_id', 'job_id', 'host', 'experiment', 'status', 'verdict', 'verdict_reasons', 'headline', 'unit', 'created_at',
  'started_at', 'finished_at', 'expected_duration_s', 'created_by', 'params', 'status_reason',
] as const;

export const EXPORT_PAGE = 200;
export const EXPORT_MAX = 10_000;

/** `fetchPage`: GET /api/runs (features/runs' getRuns, passed in by the page: features do not import each other). */
export async function fetchAllRuns(query: RunsQuery, fetchPage: (q: RunsQuery) => Promise<RunsPublic>): Promise<RunPublic[]> {
  const out: RunPublic[] = [];
  const { offset: _o, ...filters } = query;
  let before: number | undefined;
  // keyset pages (before_id: the previous page's next_before_id): no page moves while runs are added
  while (out.length < EXPORT_MAX) {
    const page = await fetchPage({ ...filters, limit: EXPORT_PAGE, ...(before !== undefined ? { before_id: before } : {}) });
    out.push(...page.data);
    if (page.next_before_id === null || page.next_before_id === undefined) break;
    before = page.next_before_id;
  }
  return out;
}

function reasons(run: RunPublic): string | null {
  const r = run.result;
  if (!r) return null;
  const texts = [...(r.flags ?? []), ...r.rows.flatMap((row) => row.flags ?? []), ...(r.trace?.flags ?? [])].map((f) => f.text);
  return [...new Set(texts)].join('; ') || null;
}

export function historyCsv(runs: readonly RunPublic[]): string {
  const rows: CsvValue[][] = [[...HISTORY_COLUMNS]];
  for (const run of runs) {
    rows.push([
      run.id, run.job_id, run.host_name, run.experiment, run.status, run.verdict ?? run.result?.verdict ?? null, reasons(run), headline(run), run.unit,
      run.created_at, run.started_at, run.finished_at, run.expected_duration_s, run.created_by ?? null, paramSummary(run.params), run.status_reason,
    ]);
  }
  return toCsv(rows);
}

export function historyJson(runs: readonly RunPublic[], query: RunsQuery): string {
  const { limit: _l, offset: _o, ...filters } = query as RunsQuery & { limit?: number; offset?: number };
  return JSON.stringify({ exported_at: new Date().toISOString(), filters, count: runs.length, runs }, null, 2);
}
