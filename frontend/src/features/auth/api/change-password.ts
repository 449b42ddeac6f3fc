import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { Me, PasswordChange } from '../../../lib/api/types';
import { ME_QUERY_KEY } from '../../../lib/auth/me';

/** PUT /api/auth/password: `current_password` may be null only while the person has none (signed in
 * by a one-time link). 401 when the current password is wrong. */
export async function changePassword(body: PasswordChange): Promise<void> {
  await unwrap(api.PUT('/api/auth/password', { body }));
}

export function useChangePassword() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: changePassword,
    onSuccess: () => qc.setQueryData(ME_QUERY_KEY, (old: Me | undefined) => (old ? { ...old, has_password: true } : old)),
  });
}
