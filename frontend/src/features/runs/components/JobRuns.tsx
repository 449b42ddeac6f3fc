// The other runs of this run's job: one per host, or a two-host network job's serve and drive runs
// (the drive run measures; the serve run only listens). Shown only when the job has more than one run.
import { Link } from 'react-router';
import { ErrorState } from '../../../components/Status';
import { RunStatusBadge } from '../../../components/RunStatusBadge';
import { paths } from '../../../config/paths';
import type { RunPublic } from '../../../lib/api/types';
import { useRuns } from '../api/get-runs';

/** What a run does within its job, where that is more than "measures on its host". */
export const runRoles: Record<string, string> = {
  network_serve: 'serves',
  network_drive: 'drives',
};

export function JobRuns({ run }: { run: RunPublic }) {
  const runs = useRuns({ job_id: run.job_id, limit: 20 });
  if (runs.isError) return <ErrorState error={runs.error} title={`Could not load the runs of job #${run.job_id}`} />;
  // While loading, nothing: the run itself is already on screen and most jobs have one run.
  if (!runs.isSuccess || runs.data.data.length <= 1) return null;
  const sorted = [...runs.data.data].sort((a, b) => a.id - b.id);
  return (
    <section className="card" aria-labelledby="job-runs-heading">
      <h2 id="job-runs-heading">Runs of job #{run.job_id}</h2>
      <div className="table-scroll">
        <table className="table" aria-label={`Runs of job #${run.job_id}`}>
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Role</th>
              <th scope="col">Host</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {sorted.map((r) => (
              <tr key={r.id} aria-current={r.id === run.id ? 'page' : undefined}>
                <th scope="row">
                  {r.id === run.id ? `#${r.id} (this run)` : <Link to={paths.run(r.id)}>#{r.id}</Link>}
                </th>
                <td>{runRoles[r.experiment] ?? r.experiment}</td>
                <td>{r.host_name}</td>
                <td>
                  <RunStatusBadge status={r.status} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
