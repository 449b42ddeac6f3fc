import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { UserCreate, UserCreated } from '../../../lib/api/types';
import { getUsersQueryOptions } from './get-users';

/** POST /api/users (admin): with a password, or (password null) with a one-time sign-in link to hand over. */
export function createUser(body: UserCreate): Promise<UserCreated> {
  return unwrap(api.POST('/api/users', { body }));
}

export function useCreateUser() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: createUser,
    onSuccess: () => void qc.invalidateQueries({ queryKey: getUsersQueryOptions().queryKey }),
  });
}
