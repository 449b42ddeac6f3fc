// Health checks (a suite over hosts or a label, each host PASS / FAIL / DISTURBED / NO BASELINE) and expected bands
// (declared, versioned). Types are derived from the generated schema.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { paths } from '../../../lib/api/schema';
import { formatBlockSize } from '../../../lib/units';

type Json<T> = T extends { content: { 'application/json': infer J } } ? J : never;
export type ChecksPublic = Json<paths['/api/checks']['get']['responses'][200]>;
export type Check = ChecksPublic['data'][number];
export type HostVerdict = Check['hosts'][number];
export type Figure = NonNullable<HostVerdict['figures']>[number];
export type CheckCreate = NonNullable<paths['/api/checks']['post']['requestBody']>['content']['application/json'];
export type BandsPublic = Json<paths['/api/bands']['get']['responses'][200]>;
export type Band = BandsPublic['data'][number];
export type BandIn = NonNullable<paths['/api/bands']['put']['requestBody']>['content']['application/json'];

/** A check's hosts are judged when its runs end: read again while one is running. */
export const CHECK_POLL_MS = 5_000;

export function useChecks() {
  return useQuery({
    queryKey: ['checks'],
    queryFn: ({ signal }) => unwrap(api.GET('/api/checks', { params: { query: { limit: 10 } }, signal })),
    refetchInterval: (q) => (q.state.data?.data.some((c) => c.status === 'running') ? CHECK_POLL_MS : false),
  });
}

export function useStartCheck() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: CheckCreate) => unwrap(api.POST('/api/checks', { body })),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['checks'] }),
  });
}

export function useBands() {
  return useQuery({ queryKey: ['bands'], queryFn: ({ signal }) => unwrap(api.GET('/api/bands', { signal })) });
}

export function useBandMutations() {
  const qc = useQueryClient();
  const done = () => void qc.invalidateQueries({ queryKey: ['bands'] });
  return {
    set: useMutation({ mutationFn: (body: BandIn) => unwrap(api.PUT('/api/bands', { body })), onSuccess: done }),
    remove: useMutation({
      mutationFn: (b: Band) =>
        unwrap(api.POST('/api/bands/remove', {
          body: { kind: b.kind, experiment: b.experiment, op: b.op, threads: b.threads, block_bytes: b.block_bytes },
        })),
      onSuccess: done,
    }),
  };
}

/** "cpu fp64 · 1 thread · 8 MiB" */
export function figureText(f: { experiment: string; op?: string | null; threads: number; block_bytes?: number | null }): string {
  const parts = [f.experiment, f.op ?? '', `${f.threads} thread${f.threads === 1 ? '' : 's'}`];
  if (f.block_bytes) parts.push(formatBlockSize(f.block_bytes));
  return parts.filter(Boolean).join(' · ');
}

/** "80.8 … +∞ GFLOP/s" */
export function rangeText(b: { lower?: number | null; upper?: number | null; unit: string }): string {
  const n = (v: number | null | undefined, none: string) => (v == null ? none : Number(v.toPrecision(4)).toString());
  return `${n(b.lower, '−∞')} … ${n(b.upper, '+∞')} ${b.unit}`.trim();
}
