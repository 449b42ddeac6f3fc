import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { UsersPublic } from '../../../lib/api/types';

/** GET /api/users (admin). */
export function getUsers(signal?: AbortSignal): Promise<UsersPublic> {
  return unwrap(api.GET('/api/users', { signal }));
}

export const getUsersQueryOptions = () => queryOptions({ queryKey: ['users'], queryFn: ({ signal }) => getUsers(signal) });

export function useUsers() {
  return useQuery(getUsersQueryOptions());
}
