import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { paths } from '../../../lib/api/schema';
import type { HostsPublic } from '../../../lib/api/types';

/** GET /api/hosts's search, filters, sort and page (the server does them: app.hosts.listing). */
export type HostListQuery = NonNullable<paths['/api/hosts']['get']['parameters']['query']>;
export type HostSort = NonNullable<HostListQuery['sort']>;
export type HostStatus = NonNullable<HostListQuery['status']>;

export function getHosts(signal?: AbortSignal, query?: HostListQuery): Promise<HostsPublic> {
  return unwrap(api.GET('/api/hosts', { params: { query }, signal }));
}

/** Every host, page after page of the server's largest (a fleet of more than 1,000 is not cut short). */
export async function getAllHosts(signal?: AbortSignal): Promise<HostsPublic> {
  const first = await getHosts(signal);
  const data = [...first.data];
  while (data.length < first.count) {
    const next = await getHosts(signal, { offset: data.length });
    if (!next.data.length) break;
    data.push(...next.data);
  }
  return { data, count: first.count };
}

/** Every host: the pickers and filters of other pages. */
export const getHostsQueryOptions = () =>
  queryOptions({
    queryKey: ['hosts'],
    queryFn: ({ signal }) => getAllHosts(signal),
    // online/offline and "last seen" are only as fresh as this.
    refetchInterval: 10_000,
  });

export function useHosts() {
  return useQuery(getHostsQueryOptions());
}

// The table polls its one page; the server answers 304 (no body) while nothing on it changed: the browser sends
// the ETag it holds (Cache-Control: no-cache), so the poll costs a round trip, not a page.
export const hostPageQueryOptions = (query: HostListQuery) =>
  queryOptions({
    queryKey: ['hosts', 'page', query],
    queryFn: ({ signal }) => getHosts(signal, query),
    refetchInterval: 10_000,
    placeholderData: keepPreviousData,
  });

export function useHostPage(query: HostListQuery) {
  return useQuery(hostPageQueryOptions(query));
}

export const hostFacetsQueryOptions = () =>
  queryOptions({
    queryKey: ['hosts', 'facets'],
    queryFn: ({ signal }) => unwrap(api.GET('/api/hosts/facets', { signal })),
    refetchInterval: 30_000,
  });

export function useHostFacets() {
  return useQuery(hostFacetsQueryOptions());
}

export function useHost(id: number | null) {
  return useQuery({
    queryKey: ['hosts', 'one', id],
    queryFn: ({ signal }) => unwrap(api.GET('/api/hosts/{host_id}', { params: { path: { host_id: id ?? 0 } }, signal })),
    enabled: id !== null,
    refetchInterval: 10_000,
  });
}
