import { queryOptions, useQueries, type UseQueryResult } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { Sample, SamplesPublic } from '../../../lib/api/types';

/** Every stored sample of a run, in one page (a run holds at most 20 000 in a browser). */
export function getRunSamples(id: number, signal?: AbortSignal): Promise<SamplesPublic> {
  return unwrap(api.GET('/api/runs/{run_id}/samples', { params: { path: { run_id: id }, query: { after_seq: -1, limit: 20000 } }, signal }));
}

export const getRunSamplesQueryOptions = (id: number) =>
  queryOptions({
    queryKey: ['runs', 'samples', id],
    queryFn: ({ signal }) => getRunSamples(id, signal),
    staleTime: 60_000,
  });

export interface RunsSamples {
  /** Per requested id, in order; undefined while loading or after an error. */
  data: (Sample[] | undefined)[];
  pending: boolean;
  error: unknown;
}

// Outside the hook so TanStack Query keeps the combined result stable between renders.
const combine = (results: UseQueryResult<SamplesPublic>[]): RunsSamples => ({
  data: results.map((r) => r.data?.data),
  pending: results.some((r) => r.isPending),
  error: results.find((r) => r.isError)?.error ?? null,
});

/** Samples of several runs at once (compare), one query per run so each caches on its own. */
export function useRunsSamples(ids: readonly number[]): RunsSamples {
  return useQueries({ queries: ids.map((id) => getRunSamplesQueryOptions(id)), combine });
}
