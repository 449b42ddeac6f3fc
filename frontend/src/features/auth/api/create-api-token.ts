import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { ApiTokenCreate, ApiTokenCreated } from '../../../lib/api/types';
import { getApiTokensQueryOptions } from './get-api-tokens';

/** POST /api/me/tokens: a new personal API token; the answer holds the secret, this once. */
export function createApiToken(body: ApiTokenCreate): Promise<ApiTokenCreated> {
  return unwrap(api.POST('/api/me/tokens', { body }));
}

export function useCreateApiToken() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: createApiToken,
    onSuccess: () => void qc.invalidateQueries({ queryKey: getApiTokensQueryOptions().queryKey }),
  });
}
