import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import { getUsersQueryOptions } from './get-users';

/** DELETE /api/users/{id} (admin): 204. The audit log keeps the name. */
export async function deleteUser(id: number): Promise<void> {
  await unwrap(api.DELETE('/api/users/{user_id}', { params: { path: { user_id: id } } }));
}

export function useDeleteUser() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: deleteUser,
    onSuccess: () => void qc.invalidateQueries({ queryKey: getUsersQueryOptions().queryKey }),
  });
}
