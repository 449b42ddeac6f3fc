// GET /api/trends/fleet: every host × the headline figures, with efficiency and outlier marks.
import { useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { paths } from '../../../lib/api/schema';

export type FleetPublic = paths['/api/trends/fleet']['get']['responses'][200]['content']['application/json'];
export type FleetHost = FleetPublic['hosts'][number];
export type FleetCell = FleetHost['cells'][string];
export type GroupBy = FleetPublic['group_by'];

export function useFleet(groupBy: GroupBy) {
  return useQuery({
    queryKey: ['trends', 'fleet', groupBy],
    queryFn: ({ signal }) => unwrap(api.GET('/api/trends/fleet', { params: { query: { group_by: groupBy } }, signal })),
    refetchInterval: 30_000,
  });
}
