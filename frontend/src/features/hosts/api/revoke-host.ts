import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { HostPublic } from '../../../lib/api/types';
import { putHost } from '../lib/hosts-cache';

/** POST /api/hosts/{id}/revoke (admin): the runner's credential stops working; its next call gets 401
 * and it stops, killing any kernel. The host stays listed (revoked) until deleted. */
export function revokeHost(id: number): Promise<HostPublic> {
  return unwrap(api.POST('/api/hosts/{host_id}/revoke', { params: { path: { host_id: id } } }));
}

export function useRevokeHost() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: revokeHost,
    onSuccess: (host) => putHost(qc, host),
  });
}
