import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { HostLabelsUpdate, HostPublic } from '../../../lib/api/types';
import { putHost } from '../lib/hosts-cache';

/** PATCH /api/hosts/{id}/labels: sent keys replace, null clears, absent keys stay. */
export function updateHostLabels(id: number, body: HostLabelsUpdate): Promise<HostPublic> {
  return unwrap(api.PATCH('/api/hosts/{host_id}/labels', { params: { path: { host_id: id } }, body }));
}

export function useUpdateHostLabels(id: number) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: HostLabelsUpdate) => updateHostLabels(id, body),
    onSuccess: (host) => {
      putHost(qc, host);
      // History filters by the host's current labels.
      void qc.invalidateQueries({ queryKey: ['runs', 'list'] });
    },
  });
}
