import { Link } from 'react-router';
import { paths } from '../../../config/paths';
import type { RunPublic } from '../../../lib/api/types';
import { formatDateTime, formatDuration } from '../../../lib/format';
import { RunStatusBadge } from './RunStatusBadge';

export function paramSummary(params: unknown): string {
  if (typeof params !== 'object' || params === null) return '';
  return Object.entries(params as Record<string, unknown>)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : String(v)}`)
    .join(' ');
}

export function RunsTable({ runs }: { runs: RunPublic[] }) {
  return (
    <div className="table-scroll">
      <table className="table runs-table">
        <caption className="visually-hidden">Runs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Experiment</th>
            <th scope="col">Host</th>
            <th scope="col">Parameters</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.id}>
              <th scope="row">
                <Link to={paths.run(r.id)}>#{r.id}</Link>
              </th>
              <td>{r.experiment}</td>
              <td>{r.host_name}</td>
              <td className="params small">{paramSummary(r.params)}</td>
              <td>
                <RunStatusBadge status={r.status} />
              </td>
              <td>{formatDateTime(r.created_at)}</td>
              <td>
                {r.started_at && r.finished_at
                  ? formatDuration((Date.parse(r.finished_at) - Date.parse(r.started_at)) / 1000)
                  : `~${formatDuration(r.expected_duration_s)}`}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
