// The other runs of this run's job: one per host, or a two-host job's serve and drive runs (the drive run
// measures; the serve run only listens). Shown only when the job has more than one run. A run's role comes
// from the experiments (their run_kinds and roles), passed in by the page.
import { Link } from 'react-router';
import { ErrorState } from '../../../components/Status';
import { RunStatusBadge } from '../../../components/RunStatusBadge';
import { roleLabels } from '../../../config/experiments';
import { paths } from '../../../config/paths';
import type { Experiment, RunPublic } from '../../../lib/api/types';
import { roleOfRun } from '../../../lib/experiments';
import { useRuns } from '../api/get-runs';

export interface JobRunsProps {
  run: RunPublic;
  /** GET /api/experiments (undefined while loading: each run is then shown by its experiment). */
  experiments: readonly Experiment[] | undefined;
}

export function JobRuns({ run, experiments }: JobRunsProps) {
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
                <td>{roleLabels[roleOfRun(experiments, r.experiment) ?? ''] ?? r.experiment}</td>
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
