import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { HostPublic } from '../../../lib/api/types';
import { putHost } from '../lib/hosts-cache';

/** POST /api/hosts/{id}/rotate-credential (admin, 202): the runner is handed a new credential on its
 * next call; `credential_rotation_pending` until it has taken it. */
export function rotateHostCredential(id: number): Promise<HostPublic> {
  return unwrap(api.POST('/api/hosts/{host_id}/rotate-credential', { params: { path: { host_id: id } } }));
}

export function useRotateHostCredential() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: rotateHostCredential,
    onSuccess: (host) => putHost(qc, host),
  });
}
