import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { RunPublic } from '../../../lib/api/types';
import { getRunQueryOptions } from './get-run';

export function cancelRun(id: number): Promise<RunPublic> {
  return unwrap(api.POST('/api/runs/{run_id}/cancel', { params: { path: { run_id: id } } }));
}

export function useCancelRun(id: number) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => cancelRun(id),
    onSuccess: (run) => {
      qc.setQueryData(getRunQueryOptions(id).queryKey, run);
      void qc.invalidateQueries({ queryKey: ['runs', 'list'] });
    },
  });
}
