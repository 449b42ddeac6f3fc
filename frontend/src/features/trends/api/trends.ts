// The trends API: a metric's series for a host or a label, the metrics a scope has, thresholds,
// events and where notifications go. Types are derived from the generated schema by operation.
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { paths } from '../../../lib/api/schema';

type Json<P extends keyof paths, M extends 'get' | 'post' | 'put', C extends number> = paths[P][M] extends {
  responses: infer R;
}
  ? C extends keyof R
    ? R[C] extends { content: { 'application/json': infer T } }
      ? T
      : never
    : never
  : never;
type BodyOf<P extends keyof paths, M extends 'post' | 'put'> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

export type SeriesPublic = Json<'/api/trends/series', 'get', 200>;
export type SeriesPoint = SeriesPublic['points'][number];
export type ChangePublic = SeriesPublic['changes'][number];
export type MetricsPublic = Json<'/api/trends/metrics', 'get', 200>;
export type MetricPublic = MetricsPublic['data'][number];
export type ThresholdPublic = SeriesPublic['thresholds'][number];
export type EventPublic = SeriesPublic['events'][number];
export type ThresholdCreate = BodyOf<'/api/trends/thresholds', 'post'>;
export type NotifyPublic = Json<'/api/trends/notifications', 'get', 200>;
export type NotifyUpdate = BodyOf<'/api/trends/notifications', 'put'>;
export type SeriesQuery = NonNullable<paths['/api/trends/series']['get']['parameters']['query']>;
export type ScopeQuery = Pick<SeriesQuery, 'host_id' | 'provider' | 'instance_type' | 'region'>;
export type HostsPublic = Json<'/api/hosts', 'get', 200>;

export function useTrendHosts() {
  return useQuery({
    queryKey: ['hosts'],
    queryFn: ({ signal }) => unwrap(api.GET('/api/hosts', { signal })),
    refetchInterval: 10_000,
  });
}

export const metricsQuery = (scope: ScopeQuery) =>
  queryOptions({
    queryKey: ['trends', 'metrics', scope],
    queryFn: ({ signal }) => unwrap(api.GET('/api/trends/metrics', { params: { query: scope }, signal })),
  });

export function useMetrics(scope: ScopeQuery | null) {
  return useQuery({ ...metricsQuery(scope ?? {}), enabled: scope !== null });
}

export function useSeries(query: SeriesQuery | null) {
  return useQuery({
    queryKey: ['trends', 'series', query],
    queryFn: ({ signal }) => unwrap(api.GET('/api/trends/series', { params: { query: query as SeriesQuery }, signal })),
    enabled: query !== null,
    refetchInterval: 15_000,
  });
}

export function useCreateThreshold() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: ThresholdCreate) => unwrap(api.POST('/api/trends/thresholds', { body })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['trends'] }),
  });
}

export function useDeleteThreshold() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.DELETE('/api/trends/thresholds/{threshold_id}', { params: { path: { threshold_id: id } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['trends'] }),
  });
}

export function useNotifications(enabled: boolean) {
  return useQuery({
    queryKey: ['trends', 'notifications'],
    queryFn: ({ signal }) => unwrap(api.GET('/api/trends/notifications', { signal })),
    enabled,
  });
}

export function useUpdateNotifications() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: NotifyUpdate) => unwrap(api.PUT('/api/trends/notifications', { body })),
    onSuccess: (data) => qc.setQueryData(['trends', 'notifications'], data),
  });
}
