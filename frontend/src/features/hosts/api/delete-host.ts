import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import { dropHost } from '../lib/hosts-cache';
import type { HostHistory } from '../../../lib/api/types';

/** DELETE /api/hosts/{id}?history=keep|delete (admin, 204): keep its runs and results, or delete them too. */
export async function deleteHost(id: number, history: HostHistory): Promise<void> {
  await unwrap(api.DELETE('/api/hosts/{host_id}', { params: { path: { host_id: id }, query: { history } } }));
}

export function useDeleteHost() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, history }: { id: number; history: HostHistory }) => deleteHost(id, history),
    onSuccess: (_, { id }) => {
      dropHost(qc, id);
      void qc.invalidateQueries({ queryKey: ['runs'] });
    },
  });
}
