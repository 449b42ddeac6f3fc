import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { RunPublic } from '../../../lib/api/types';

export function getRun(id: number, signal?: AbortSignal): Promise<RunPublic> {
  return unwrap(api.GET('/api/runs/{run_id}', { params: { path: { run_id: id } }, signal }));
}

export const getRunQueryOptions = (id: number) =>
  queryOptions({
    queryKey: ['runs', 'detail', id],
    queryFn: ({ signal }) => getRun(id, signal),
  });

export function useRun(id: number) {
  return useQuery(getRunQueryOptions(id));
}
