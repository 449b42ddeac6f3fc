// History filters live in the URL (shareable, back/forward work): read them, write them, and turn
// them into the GET /api/runs query. Dates are whole local days: `from` includes its day from
// midnight, `to` includes its day up to the next midnight.
import { RUN_STATUSES, type RunStatus, type RunsQuery } from '../../../lib/api/types';

export const TEXT_FILTERS = ['provider', 'instance_type', 'region'] as const;
export const FILTER_KEYS = ['host', 'experiment', 'status', ...TEXT_FILTERS, 'from', 'to'] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];
export type HistoryFilters = Record<FilterKey, string>;

export const PAGE_SIZE = 25;

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export function readFilters(search: URLSearchParams): { filters: HistoryFilters; page: number } {
  const filters = Object.fromEntries(FILTER_KEYS.map((k) => [k, (search.get(k) ?? '').trim()])) as HistoryFilters;
  if (filters.host && !/^\d{1,12}$/.test(filters.host)) filters.host = '';
  if (filters.status && !RUN_STATUSES.includes(filters.status as RunStatus)) filters.status = '';
  if (filters.from && !DAY.test(filters.from)) filters.from = '';
  if (filters.to && !DAY.test(filters.to)) filters.to = '';
  const page = Math.max(0, Math.floor(Number(search.get('page') ?? '0')) || 0);
  return { filters, page };
}

/** A new search with `patch` applied; any filter change goes back to the first page. */
export function writeFilters(search: URLSearchParams, patch: Partial<HistoryFilters> & { page?: number }): URLSearchParams {
  const next = new URLSearchParams(search);
  let filterChanged = false;
  for (const [k, v] of Object.entries(patch)) {
    if (k === 'page') continue;
    const value = String(v ?? '').trim();
    if ((next.get(k) ?? '') !== value) filterChanged = true;
    if (value) next.set(k, value);
    else next.delete(k);
  }
  const page = patch.page ?? (filterChanged ? 0 : Number(next.get('page') ?? 0));
  if (page > 0) next.set('page', String(page));
  else next.delete('page');
  return next;
}

export function clearFilters(search: URLSearchParams): URLSearchParams {
  const next = new URLSearchParams(search);
  for (const k of [...FILTER_KEYS, 'page']) next.delete(k);
  return next;
}

/** Local midnight of a YYYY-MM-DD day, as an ISO instant; `plusDays` moves it. */
export function localDayStart(day: string, plusDays = 0): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return new Date(y, m - 1, d + plusDays).toISOString();
}

export function toRunsQuery(filters: HistoryFilters, page: number, pageSize = PAGE_SIZE): RunsQuery {
  const q: RunsQuery = { limit: pageSize, offset: page * pageSize };
  if (filters.host) q.host_id = Number(filters.host);
  if (filters.experiment) q.experiment = filters.experiment as NonNullable<RunsQuery['experiment']>;
  if (filters.status) q.status = filters.status as RunStatus; // checked against RUN_STATUSES when read
  for (const k of TEXT_FILTERS) if (filters[k]) q[k] = filters[k];
  if (filters.from) q.created_after = localDayStart(filters.from);
  if (filters.to) q.created_before = localDayStart(filters.to, 1);
  return q;
}

export function activeFilterCount(filters: HistoryFilters): number {
  return FILTER_KEYS.filter((k) => filters[k]).length;
}
