// The recent meshes, newest first: mode, hosts, status, links measured (the list carries no figures).
import { Link } from 'react-router';
import { Empty, ErrorState, Loading } from '../../../components/Status';
import { formatDateTime } from '../../../lib/format';
import { useMeshes } from '../api/meshes';
import { MODE_LABELS } from '../lib/heat';

export function RecentMeshes({ meshPath }: { meshPath: (id: number) => string }) {
  const meshes = useMeshes();
  if (meshes.isPending) return <Loading label="Loading recent meshes…" />;
  if (meshes.isError) return <ErrorState error={meshes.error} title="Could not load recent meshes" onRetry={() => void meshes.refetch()} />;
  if (meshes.data.data.length === 0) return <Empty>No hosts have been tested together yet.</Empty>;
  return (
    <div className="table-scroll">
      <table className="table" aria-label="Recent meshes">
        <thead>
          <tr>
            <th scope="col">Mesh</th>
            <th scope="col">Status</th>
            <th scope="col">Hosts</th>
            <th scope="col" className="num">
              Links measured
            </th>
            <th scope="col">Started</th>
            <th scope="col">By</th>
          </tr>
        </thead>
        <tbody>
          {meshes.data.data.map((m) => (
            <tr key={m.id}>
              <th scope="row">
                <Link to={meshPath(m.id)}>
                  #{m.id} {MODE_LABELS[m.mode]}
                </Link>
              </th>
              <td>{m.status}</td>
              <td>{[...(m.server ? [`${m.server.name} (server)`] : []), ...m.hosts.map((h) => h.name)].join(', ')}</td>
              <td className="num">
                {m.cells.filter((c) => c.status === 'succeeded').length} of {m.cells.length}
              </td>
              <td>{formatDateTime(m.created_at)}</td>
              <td>{m.created_by ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
