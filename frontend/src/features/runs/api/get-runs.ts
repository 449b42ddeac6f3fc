import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { RunsPublic, RunsQuery } from '../../../lib/api/types';

export function getRuns(query: RunsQuery, signal?: AbortSignal): Promise<RunsPublic> {
  return unwrap(api.GET('/api/runs', { params: { query }, signal }));
}

export const getRunsQueryOptions = (query: RunsQuery) =>
  queryOptions({
    queryKey: ['runs', 'list', query],
    queryFn: ({ signal }) => getRuns(query, signal),
    placeholderData: keepPreviousData,
    refetchInterval: 5_000,
  });

export function useRuns(query: RunsQuery) {
  return useQuery(getRunsQueryOptions(query));
}
