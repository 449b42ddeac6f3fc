// POST /api/jobs/estimate: how long a job usually takes, with its reference tools when they are on (the server plans
// them as the runner would, each with its cost model), and its cap. Asked for every job the form would send, so
// that the form shows the one model's figure (the published terms give only the measuring time, until it answers).
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { JobCreate, JobEstimate } from '../../../lib/api/types';

export function estimateJob(body: JobCreate, signal?: AbortSignal): Promise<JobEstimate> {
  return unwrap(api.POST('/api/jobs/estimate', { body, signal }));
}

export function useJobEstimate(body: JobCreate | null) {
  return useQuery({
    queryKey: ['job-estimate', body],
    queryFn: ({ signal }) => estimateJob(body as JobCreate, signal),
    enabled: body !== null,
    staleTime: 60_000,
    placeholderData: keepPreviousData,
    retry: false,
  });
}
