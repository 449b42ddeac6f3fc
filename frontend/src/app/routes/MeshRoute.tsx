// One mesh (features/meshes): its matrix as a heat map, polled while it runs; operators may cancel it.
import { Link, useParams } from 'react-router';
import { ConfirmDialog } from '../../components/Dialog';
import { PageHeader } from '../../components/PageHeader';
import { ErrorState, Loading } from '../../components/Status';
import { paths } from '../../config/paths';
import { useCancelMesh, useMesh } from '../../features/meshes/api/meshes';
import { MeshMatrix } from '../../features/meshes/components/MeshMatrix';
import { MODE_LABELS } from '../../features/meshes/lib/heat';
import { errorMessage } from '../../lib/api/errors';
import { useMe } from '../../lib/auth/me';
import { abilities } from '../../lib/auth/roles';
import { useState } from 'react';
import { NotFoundRoute } from './NotFoundRoute';

export function MeshRoute() {
  const { id } = useParams();
  const meshId = Number(id);
  if (!Number.isInteger(meshId) || meshId <= 0) return <NotFoundRoute />;
  return <MeshPage id={meshId} />;
}

function MeshPage({ id }: { id: number }) {
  const mesh = useMesh(id);
  const cancel = useCancelMesh(id);
  const me = useMe();
  const can = abilities(me.data?.role);
  const [asking, setAsking] = useState(false);
  const m = mesh.data;
  const on = m !== undefined && (m.status === 'queued' || m.status === 'running');
  return (
    <>
      <PageHeader title={m ? `${MODE_LABELS[m.mode]} · mesh #${id}` : `Mesh #${id}`}>
        {can.operate && on ? (
          <button type="button" className="button button-ghost" onClick={() => setAsking(true)}>
            Cancel
          </button>
        ) : null}
        <Link to={paths.meshes} className="button button-ghost">
          All meshes
        </Link>
      </PageHeader>
      {mesh.isPending ? (
        <Loading label="Loading the mesh…" />
      ) : mesh.isError ? (
        <ErrorState error={mesh.error} title="Could not load the mesh" onRetry={() => void mesh.refetch()} />
      ) : (
        <>
          <p>
            <strong>{mesh.data.status}</strong>: {mesh.data.cells.filter((c) => c.status === 'succeeded').length} of {mesh.data.cells.length} links measured
            in {mesh.data.rounds} {mesh.data.rounds === 1 ? 'round' : 'rounds'}
            {mesh.data.server ? `, every client driving to ${mesh.data.server.name}` : ''}.
          </p>
          <MeshMatrix mesh={mesh.data} runPath={paths.run} />
        </>
      )}
      {asking && m ? (
        <ConfirmDialog
          title={`Cancel mesh #${id}?`}
          confirmLabel="Cancel the mesh"
          closeLabel="Keep it running"
          pending={cancel.isPending}
          error={cancel.error ? errorMessage(cancel.error) : undefined}
          onClose={() => setAsking(false)}
          onConfirm={() => cancel.mutate(undefined, { onSuccess: () => setAsking(false) })}
        >
          <p>Every run of the mesh still queued or running ends cancelled; links already measured keep their figures.</p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}
