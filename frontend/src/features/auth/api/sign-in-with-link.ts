import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { setSignedInRole, unwrap } from '../../../lib/api/errors';
import type { Me } from '../../../lib/api/types';
import { ME_QUERY_KEY } from '../../../lib/auth/me';

/** POST /api/auth/link: trades a one-time sign-in link's token (`hblink_…`, from the URL fragment)
 * for a session. The token works once. */
export function signInWithLink(token: string): Promise<Me> {
  return unwrap(api.POST('/api/auth/link', { body: { token } }));
}

export function useSignInWithLink() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: signInWithLink,
    onSuccess: (me) => {
      qc.clear();
      setSignedInRole(me.role);
      qc.setQueryData(ME_QUERY_KEY, me);
    },
  });
}
