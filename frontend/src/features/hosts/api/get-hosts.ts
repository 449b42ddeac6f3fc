import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { HostsPublic } from '../../../lib/api/types';

export function getHosts(signal?: AbortSignal): Promise<HostsPublic> {
  return unwrap(api.GET('/api/hosts', { signal }));
}

export const getHostsQueryOptions = () =>
  queryOptions({
    queryKey: ['hosts'],
    queryFn: ({ signal }) => getHosts(signal),
    // online/offline and "last seen" are only as fresh as this.
    refetchInterval: 10_000,
  });

export function useHosts() {
  return useQuery(getHostsQueryOptions());
}
