import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { ExperimentsPublic } from '../../../lib/api/types';

export function getExperiments(signal?: AbortSignal): Promise<ExperimentsPublic> {
  return unwrap(api.GET('/api/experiments', { signal }));
}

export const getExperimentsQueryOptions = () =>
  queryOptions({
    queryKey: ['experiments'],
    queryFn: ({ signal }) => getExperiments(signal),
    staleTime: 5 * 60_000,
  });

export function useExperiments() {
  return useQuery(getExperimentsQueryOptions());
}
