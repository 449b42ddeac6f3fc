import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { setSignedInRole, unwrap } from '../../../lib/api/errors';

/** POST /api/auth/logout: ends this browser's session (204). */
export async function logout(): Promise<void> {
  await unwrap(api.POST('/api/auth/logout'));
}

export function useLogout() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: logout,
    // Whatever the answer, this browser forgets what it loaded while signed in.
    onSettled: () => {
      setSignedInRole(null);
      qc.clear();
    },
  });
}
