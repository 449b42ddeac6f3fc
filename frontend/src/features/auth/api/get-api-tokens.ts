import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { ApiTokensPublic } from '../../../lib/api/types';

/** GET /api/me/tokens: the signed-in person's personal API tokens (never the secrets). */
export function getApiTokens(signal?: AbortSignal): Promise<ApiTokensPublic> {
  return unwrap(api.GET('/api/me/tokens', { signal }));
}

export const getApiTokensQueryOptions = () => queryOptions({ queryKey: ['me', 'tokens'], queryFn: ({ signal }) => getApiTokens(signal) });

export function useApiTokens() {
  return useQuery(getApiTokensQueryOptions());
}
