import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { JobCreate, JobPublic } from '../../../lib/api/types';

export function createJob(body: JobCreate): Promise<JobPublic> {
  return unwrap(api.POST('/api/jobs', { body }));
}

export function useCreateJob() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: createJob,
    // New runs appear in the run list at once.
    onSuccess: () => qc.invalidateQueries({ queryKey: ['runs'] }),
  });
}
