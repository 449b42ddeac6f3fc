// The recent suite runs, newest first: each one unit, with its progress.
import { Link } from 'react-router';
import { Empty, ErrorState, Loading } from '../../../components/Status';
import { formatDateTime, formatPercent } from '../../../lib/format';
import { useSuiteRuns } from '../api/suites';
import { SuiteStatusBadge } from './SuiteStatusBadge';

export function RecentSuiteRuns({ runPath }: { runPath: (id: number) => string }) {
  const runs = useSuiteRuns();
  if (runs.isPending) return <Loading label="Loading recent suite runs…" />;
  if (runs.isError) return <ErrorState error={runs.error} title="Could not load recent suite runs" onRetry={() => void runs.refetch()} />;
  if (runs.data.data.length === 0) return <Empty>No suite has been run yet.</Empty>;
  return (
    <div className="table-scroll">
      <table className="table" aria-label="Recent suite runs">
        <thead>
          <tr>
            <th scope="col">Suite run</th>
            <th scope="col">Status</th>
            <th scope="col" className="num">
              Runs done
            </th>
            <th scope="col">Started</th>
            <th scope="col">By</th>
          </tr>
        </thead>
        <tbody>
          {runs.data.data.map((sr) => (
            <tr key={sr.id}>
              <th scope="row">
                <Link to={runPath(sr.id)}>
                  #{sr.id} {sr.title}
                </Link>
              </th>
              <td>
                <SuiteStatusBadge status={sr.status} />
              </td>
              <td className="num">
                {sr.runs_done} of {sr.runs_total} ({formatPercent(sr.progress)})
              </td>
              <td>{formatDateTime(sr.created_at)}</td>
              <td>{sr.created_by ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
