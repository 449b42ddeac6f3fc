import { useMutation } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { SignInLink } from '../../../lib/api/types';

/** POST /api/users/{id}/sign-in-link (admin): a new one-time sign-in link for the person. */
export function createSignInLink(id: number): Promise<SignInLink> {
  return unwrap(api.POST('/api/users/{user_id}/sign-in-link', { params: { path: { user_id: id } } }));
}

export function useCreateSignInLink() {
  return useMutation({ mutationFn: createSignInLink });
}
