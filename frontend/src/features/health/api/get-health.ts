import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { Health } from '../../../lib/api/types';

export function getHealth(signal?: AbortSignal): Promise<Health> {
  return unwrap(api.GET('/api/health', { signal }));
}

export const getHealthQueryOptions = () =>
  queryOptions({
    queryKey: ['health'],
    queryFn: ({ signal }) => getHealth(signal),
    refetchInterval: 10_000,
    retry: false,
  });

export function useHealth() {
  return useQuery(getHealthQueryOptions());
}
