// GET /api/auth/me: who is signed in. The one hook every role check reads (`useMe`); the app shell
// sends a person who is not signed in to /signin. Shared (not a feature) because the shell, every page
// and the 403 wording all need it.
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../api/client';
import { setSignedInRole, unwrap } from '../api/errors';
import type { Me } from '../api/types';
import { abilities } from './roles';

export const ME_QUERY_KEY = ['auth', 'me'] as const;

export async function getMe(signal?: AbortSignal): Promise<Me> {
  const me = await unwrap(api.GET('/api/auth/me', { signal }));
  setSignedInRole(me.role);
  return me;
}

export const meQueryOptions = () =>
  queryOptions({
    queryKey: ME_QUERY_KEY,
    queryFn: ({ signal }) => getMe(signal),
    // A role change or a disabled account shows up within a minute, and at once on window focus.
    staleTime: 60_000,
    refetchInterval: 60_000,
    retry: false,
  });

export function useMe() {
  return useQuery(meQueryOptions());
}

/** The signed-in person's abilities; nothing while unknown (so nothing is offered by mistake). */
export function useAbilities() {
  const me = useMe();
  return abilities(me.data?.role);
}
