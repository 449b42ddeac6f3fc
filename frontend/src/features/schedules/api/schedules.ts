// The schedules API: schedules (a suite on hosts or a label's hosts, by interval or cron), their firings, the
// server's preview of a recurrence's next times; and the suites and hosts the form offers. Types are derived from
// the generated schema.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { paths } from '../../../lib/api/schema';

type Json<T> = T extends { content: { 'application/json': infer J } } ? J : never;
export type SchedulesPublic = Json<paths['/api/schedules']['get']['responses'][200]>;
export type Schedule = SchedulesPublic['data'][number];
export type ScheduleIn = NonNullable<paths['/api/schedules']['post']['requestBody']>['content']['application/json'];
export type FiringsPublic = Json<paths['/api/schedules/{schedule_id}/history']['get']['responses'][200]>;
export type Firing = FiringsPublic['data'][number];
export type PreviewQuery = { interval_s: number } | { cron: string };

export const scheduleKeys = {
  list: ['schedules', 'list'] as const,
  history: (id: number, offset: number) => ['schedules', 'history', id, offset] as const,
  preview: (q: PreviewQuery | null) => ['schedules', 'preview', q] as const,
};

/** How often the list and an open history are read again: a firing shows within this of beat's. */
export const SCHEDULE_POLL_MS = 5_000;
export const HISTORY_PAGE = 20;

export function useSchedules() {
  return useQuery({
    queryKey: scheduleKeys.list,
    queryFn: ({ signal }) => unwrap(api.GET('/api/schedules', { signal })),
    refetchInterval: SCHEDULE_POLL_MS,
  });
}

export function useScheduleHistory(id: number, offset: number) {
  return useQuery({
    queryKey: scheduleKeys.history(id, offset),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/schedules/{schedule_id}/history', {
          params: { path: { schedule_id: id }, query: { limit: HISTORY_PAGE, offset } },
          signal,
        }),
      ),
    refetchInterval: SCHEDULE_POLL_MS,
    placeholderData: keepPreviousData,
  });
}

/** The next three fire times of a recurrence, as the server computes them (null: nothing to ask yet). */
export function usePreview(q: PreviewQuery | null) {
  return useQuery({
    queryKey: scheduleKeys.preview(q),
    queryFn: ({ signal }) => unwrap(api.GET('/api/schedules/preview', { params: { query: q ?? {} }, signal })),
    enabled: q !== null,
    retry: false,
    staleTime: 30_000,
  });
}

export function useScheduleSuites() {
  return useQuery({
    queryKey: ['suites'],
    queryFn: ({ signal }) => unwrap(api.GET('/api/suites', { signal })),
    staleTime: 5 * 60_000,
  });
}

export function useScheduleHosts() {
  return useQuery({
    queryKey: ['hosts'],
    queryFn: ({ signal }) => unwrap(api.GET('/api/hosts', { signal })),
    refetchInterval: 10_000,
  });
}

/** Create, change (the enabled toggle too), delete and run now; each refreshes the list and the histories. */
export function useScheduleMutations() {
  const qc = useQueryClient();
  const done = () => void qc.invalidateQueries({ queryKey: ['schedules'] });
  return {
    create: useMutation({ mutationFn: (body: ScheduleIn) => unwrap(api.POST('/api/schedules', { body })), onSuccess: done }),
    update: useMutation({
      mutationFn: ({ id, body }: { id: number; body: ScheduleIn }) =>
        unwrap(api.PUT('/api/schedules/{schedule_id}', { params: { path: { schedule_id: id } }, body })),
      onSuccess: (s: Schedule) => {
        // the answer is the schedule as it now is: shown at once, before the list is read again
        qc.setQueryData<SchedulesPublic>(scheduleKeys.list, (old) => old && { data: old.data.map((x) => (x.id === s.id ? s : x)) });
        done();
      },
    }),
    remove: useMutation({
      mutationFn: (id: number) => unwrap(api.DELETE('/api/schedules/{schedule_id}', { params: { path: { schedule_id: id } } })),
      onSuccess: done,
    }),
    runNow: useMutation({
      mutationFn: (id: number) => unwrap(api.POST('/api/schedules/{schedule_id}/run-now', { params: { path: { schedule_id: id } } })),
      onSuccess: () => {
        done();
        void qc.invalidateQueries({ queryKey: ['suite-runs'] });
      },
    }),
  };
}
