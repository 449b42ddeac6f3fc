import { useMutation } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { RegistrationToken, RegistrationTokenCreate } from '../../../lib/api/types';

/** POST /api/hosts/registration-tokens (admin): a single-use token that expires, with the command to
 * paste on the target host and its container alternative. */
export function createRegistrationToken(body: RegistrationTokenCreate = { ttl_s: 900, uses: 1 }): Promise<RegistrationToken> {
  return unwrap(api.POST('/api/hosts/registration-tokens', { body }));
}

export function useCreateRegistrationToken() {
  return useMutation({ mutationFn: createRegistrationToken });
}
