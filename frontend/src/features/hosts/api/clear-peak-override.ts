import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { HostPublic, PeakKey } from '../../../lib/api/types';
import { putHost } from '../lib/hosts-cache';

/** DELETE /api/hosts/{id}/peaks/{key}: back to the computed peak (or none). */
export function clearPeakOverride(id: number, key: PeakKey): Promise<HostPublic> {
  return unwrap(api.DELETE('/api/hosts/{host_id}/peaks/{key}', { params: { path: { host_id: id, key } } }));
}

export function useClearPeakOverride(id: number) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (key: PeakKey) => clearPeakOverride(id, key),
    onSuccess: (host) => putHost(qc, host),
  });
}
