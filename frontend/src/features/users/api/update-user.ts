import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { UserUpdate } from '../../../lib/api/types';
import { getUsersQueryOptions } from './get-users';

/** PATCH /api/users/{id} (admin): change the role, or disable / enable the account. */
export async function updateUser(id: number, body: UserUpdate): Promise<void> {
  await unwrap(api.PATCH('/api/users/{user_id}', { params: { path: { user_id: id } }, body }));
}

export function useUpdateUser() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: UserUpdate }) => updateUser(id, body),
    onSettled: () => void qc.invalidateQueries({ queryKey: getUsersQueryOptions().queryKey }),
  });
}
