import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { setSignedInRole, unwrap } from '../../../lib/api/errors';
import type { LoginBody, Me } from '../../../lib/api/types';
import { ME_QUERY_KEY } from '../../../lib/auth/me';

/** POST /api/auth/login: sets the session cookie (HttpOnly) and the CSRF cookie; 401 wrong name or
 * password, 429 with Retry-After when rate-limited. */
export function login(body: LoginBody): Promise<Me> {
  return unwrap(api.POST('/api/auth/login', { body }));
}

export function useLogin() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: login,
    onSuccess: (me) => {
      // Nothing cached under another person (or none) may leak into this session.
      qc.clear();
      setSignedInRole(me.role);
      qc.setQueryData(ME_QUERY_KEY, me);
    },
  });
}
