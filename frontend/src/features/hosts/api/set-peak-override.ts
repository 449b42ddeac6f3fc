import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { HostPublic, PeakKey, PeakOverride } from '../../../lib/api/types';
import { putHost } from '../lib/hosts-cache';

/** PUT /api/hosts/{id}/peaks/{key}: a peak entered by a person wins over the computed one for later runs. */
export function setPeakOverride(id: number, key: PeakKey, body: PeakOverride): Promise<HostPublic> {
  return unwrap(api.PUT('/api/hosts/{host_id}/peaks/{key}', { params: { path: { host_id: id, key } }, body }));
}

export function useSetPeakOverride(id: number) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ key, body }: { key: PeakKey; body: PeakOverride }) => setPeakOverride(id, key, body),
    onSuccess: (host) => putHost(qc, host),
  });
}
