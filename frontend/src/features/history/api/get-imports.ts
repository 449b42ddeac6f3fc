import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';

/** Reference-tool outputs imported into hosts' history (`./hostbench parse ... --import`), newest first. */
export function getImports(hostId: number | undefined, signal?: AbortSignal) {
  return unwrap(api.GET('/api/reference/imports', { params: { query: { host_id: hostId, limit: 50 } }, signal }));
}

export const getImportsQueryOptions = (hostId: number | undefined) =>
  queryOptions({ queryKey: ['reference-imports', hostId ?? null], queryFn: ({ signal }) => getImports(hostId, signal) });

export function useImports(hostId: number | undefined) {
  return useQuery(getImportsQueryOptions(hostId));
}
