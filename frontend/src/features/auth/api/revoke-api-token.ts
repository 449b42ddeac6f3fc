import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import { getApiTokensQueryOptions } from './get-api-tokens';

/** DELETE /api/me/tokens/{id}: the token stops working at once (204). */
export async function revokeApiToken(id: number): Promise<void> {
  await unwrap(api.DELETE('/api/me/tokens/{token_id}', { params: { path: { token_id: id } } }));
}

export function useRevokeApiToken() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: revokeApiToken,
    onSuccess: () => void qc.invalidateQueries({ queryKey: getApiTokensQueryOptions().queryKey }),
  });
}
