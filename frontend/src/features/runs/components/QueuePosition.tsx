// Where a queued run stands on its host: one benchmark runs per host at a time, the rest wait in
// id order (the server dispatches the oldest queued run first). From GET /api/runs filtered by host
// and status; nothing is estimated beyond what the runs ahead expect to take.
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { paths } from '../../../config/paths';
import type { RunPublic, RunStatus } from '../../../lib/api/types';
import { formatDuration } from '../../../lib/format';
import { getRuns } from '../api/get-runs';

export function queueAhead(run: Pick<RunPublic, 'id'>, busy: readonly RunPublic[], queued: readonly RunPublic[]): RunPublic[] {
  return [...busy.filter((r) => r.id !== run.id), ...queued.filter((r) => r.id < run.id)].sort((a, b) => a.id - b.id);
}

export function QueuePosition({ run }: { run: RunPublic }) {
  const waiting = run.status === 'queued';
  const q = useQuery({
    queryKey: ['runs', 'queue', run.host_id, run.id],
    enabled: waiting,
    refetchInterval: 5_000,
    queryFn: async ({ signal }) => {
      const page = (status: RunStatus) => getRuns({ host_id: run.host_id, status, limit: 200 }, signal);
      const [queued, dispatched, running] = await Promise.all([page('queued'), page('dispatched'), page('running')]);
      return queueAhead(run, [...dispatched.data, ...running.data], queued.data);
    },
  });
  if (!waiting || !q.data) return null;
  const ahead = q.data;
  if (!ahead.length) return <p className="small muted" role="status">Next in line on {run.host_name}: waiting for its runner to take it.</p>;
  const expected = ahead.reduce((s, r) => s + r.expected_duration_s, 0);
  return (
    <p className="small" role="status" aria-label="Queue position">
      Position {ahead.length + 1} in the queue of {run.host_name}: {ahead.length} run{ahead.length === 1 ? '' : 's'} ahead (
      {ahead.slice(0, 5).map((r, i) => (
        <span key={r.id}>
          {i ? ', ' : ''}
          <Link to={paths.run(r.id)}>#{r.id}</Link> {r.status}
        </span>
      ))}
      {ahead.length > 5 ? ', …' : ''}), expected to take about {formatDuration(expected)} together.
    </p>
  );
}
