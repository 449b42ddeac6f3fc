// The suites API: the built-in and saved suites (save, change, delete, export, import), a suite run (one unit: all
// its jobs), the recent ones; start and cancel.
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { paths } from '../../../lib/api/schema';

type Json<T> = T extends { content: { 'application/json': infer J } } ? J : never;
export type SuitesPublic = Json<paths['/api/suites']['get']['responses'][200]>;
export type Suite = SuitesPublic['data'][number];
export type SuiteItem = Suite['items'][number];
export type SuiteIn = NonNullable<paths['/api/suites']['post']['requestBody']>['content']['application/json'];
export type SuiteRun = Json<paths['/api/suite-runs']['post']['responses'][201]>;
export type SuiteRunsPublic = Json<paths['/api/suite-runs']['get']['responses'][200]>;
export type SuiteRunRun = SuiteRun['runs'][number];
export type SuiteEstimate = Json<paths['/api/suite-runs/estimate']['post']['responses'][200]>;

export const suiteKeys = {
  suites: ['suites'] as const,
  runs: ['suite-runs', 'list'] as const,
  run: (id: number) => ['suite-runs', 'detail', id] as const,
};

/** How often a running suite run is read again. */
export const SUITE_POLL_MS = 2_000;

export function useSuites() {
  return useQuery(
    queryOptions({
      queryKey: suiteKeys.suites,
      queryFn: ({ signal }) => unwrap(api.GET('/api/suites', { signal })),
      staleTime: 5 * 60_000,
    }),
  );
}

export function useSuiteRuns() {
  return useQuery({
    queryKey: suiteKeys.runs,
    queryFn: ({ signal }) => unwrap(api.GET('/api/suite-runs', { signal })),
    refetchInterval: (q) => (q.state.data?.data.some((r) => r.status === 'running') ? SUITE_POLL_MS * 2 : false),
  });
}

export function useSuiteRun(id: number) {
  return useQuery({
    queryKey: suiteKeys.run(id),
    queryFn: ({ signal }) => unwrap(api.GET('/api/suite-runs/{suite_run_id}', { params: { path: { suite_run_id: id } }, signal })),
    // Polled while running; a finished suite run does not change.
    refetchInterval: (q) => (q.state.data?.status === 'running' ? SUITE_POLL_MS : false),
  });
}

export function useStartSuiteRun() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: { suite: string; host_ids: number[]; peer_host_id?: number }) => unwrap(api.POST('/api/suite-runs', { body })),
    onSuccess: (sr) => {
      qc.setQueryData(suiteKeys.run(sr.id), sr);
      void qc.invalidateQueries({ queryKey: ['suite-runs', 'list'] });
      void qc.invalidateQueries({ queryKey: ['runs'] });
    },
  });
}

export function useCancelSuiteRun(id: number) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST('/api/suite-runs/{suite_run_id}/cancel', { params: { path: { suite_run_id: id } } })),
    onSuccess: (sr) => {
      qc.setQueryData(suiteKeys.run(id), sr);
      void qc.invalidateQueries({ queryKey: ['suite-runs', 'list'] });
      void qc.invalidateQueries({ queryKey: ['runs'] });
    },
  });
}

/** GET /api/suites/{id}: one suite as it is now, the export format. */
export function getSuite(id: string): Promise<Suite> {
  return unwrap(api.GET('/api/suites/{suite_id}', { params: { path: { suite_id: id } } }));
}

/** Save, change or delete a saved suite; every one refreshes the list. `body` of a save may be an export file's
 * content as read (the server ignores its id, owner and duration, and checks the rest). */
export function useSuiteMutations() {
  const qc = useQueryClient();
  const done = () => void qc.invalidateQueries({ queryKey: suiteKeys.suites });
  return {
    save: useMutation({
      mutationFn: (body: SuiteIn | Record<string, unknown>) => unwrap(api.POST('/api/suites', { body: body as SuiteIn })),
      onSuccess: done,
    }),
    update: useMutation({
      mutationFn: ({ id, body }: { id: string; body: SuiteIn }) =>
        unwrap(api.PUT('/api/suites/{suite_id}', { params: { path: { suite_id: id } }, body })),
      onSuccess: done,
    }),
    remove: useMutation({
      mutationFn: (id: string) => unwrap(api.DELETE('/api/suites/{suite_id}', { params: { path: { suite_id: id } } })),
      onSuccess: done,
    }),
  };
}

/** The suite on the hosts picked: what it usually takes (each run's typical time, its reference tools' cost models
 * included, on each host's CPUs and RAM; the longest host) and its cap. Nothing is started. */
export function useSuiteEstimate(suite: string, hostIds: number[], peerHostId: number | null) {
  return useQuery({
    queryKey: ['suite-estimate', suite, hostIds, peerHostId],
    queryFn: ({ signal }) =>
      unwrap(api.POST('/api/suite-runs/estimate', { body: { suite, host_ids: hostIds, peer_host_id: peerHostId }, signal })),
    enabled: hostIds.length > 0,
    staleTime: 60_000,
    retry: false,
  });
}
