// GET /api/report?runs=…|job=…|suite=… — the report of a set of runs in one document; /api/report/html the same as a
// self-contained file the server renders (a plain link downloads it).
import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiUrl } from '../../../config/env';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { ReportSelection } from '../lib/format';

export function getReport(sel: ReportSelection, signal?: AbortSignal) {
  return unwrap(api.GET('/api/report', { params: { query: sel }, signal }));
}

export type Report = Awaited<ReturnType<typeof getReport>>;
export type ReportRun = Report['runs'][number];

export const getReportQueryOptions = (sel: ReportSelection) =>
  queryOptions({ queryKey: ['report', sel.runs ?? null, sel.job ?? null, sel.suite ?? null], queryFn: ({ signal }) => getReport(sel, signal) });

export function useReport(sel: ReportSelection | null) {
  return useQuery({ ...getReportQueryOptions(sel ?? {}), enabled: sel !== null });
}

export function reportHtmlUrl(sel: ReportSelection): string {
  const q = sel.suite !== undefined ? `suite=${sel.suite}` : sel.job !== undefined ? `job=${sel.job}` : `runs=${sel.runs ?? ''}`;
  return apiUrl(`/api/report/html?${q}`);
}
