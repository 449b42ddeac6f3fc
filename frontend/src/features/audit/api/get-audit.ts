import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { AuditPublic, AuditQuery } from '../../../lib/api/types';

/** GET /api/audit?limit=&offset= (any signed-in role): who did what, newest first. */
export function getAudit(query: AuditQuery, signal?: AbortSignal): Promise<AuditPublic> {
  return unwrap(api.GET('/api/audit', { params: { query }, signal }));
}

export const getAuditQueryOptions = (query: AuditQuery) =>
  queryOptions({ queryKey: ['audit', query], queryFn: ({ signal }) => getAudit(query, signal), placeholderData: keepPreviousData });

export function useAudit(query: AuditQuery) {
  return useQuery(getAuditQueryOptions(query));
}
