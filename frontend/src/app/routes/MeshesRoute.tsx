// Hosts tested together (features/meshes): the form (operators) with the hosts (features/hosts), and the recent meshes.
import { useNavigate } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import { ErrorState, Loading } from '../../components/Status';
import { paths } from '../../config/paths';
import { useHosts } from '../../features/hosts/api/get-hosts';
import { MeshForm } from '../../features/meshes/components/MeshForm';
import { RecentMeshes } from '../../features/meshes/components/RecentMeshes';
import { useMe } from '../../lib/auth/me';
import { abilities } from '../../lib/auth/roles';

export function MeshesRoute() {
  const hosts = useHosts();
  const me = useMe();
  const can = abilities(me.data?.role);
  const navigate = useNavigate();
  return (
    <>
      <PageHeader title="Hosts together" />
      <p className="muted">
        Network tests across hosts at once: all pairs (each pair, or each pair both ways) in rounds, or many clients driving one server at the same
        time. One result: the matrix of Mbit/s and round trips, with the slowest link and host.
      </p>
      {can.operate ? (
        hosts.isPending ? (
          <Loading label="Loading hosts…" />
        ) : hosts.isError ? (
          <ErrorState error={hosts.error} title="Could not load hosts" onRetry={() => void hosts.refetch()} />
        ) : (
          <MeshForm
            hosts={hosts.data.data.map((h) => ({ id: h.id, name: h.name, online: h.online }))}
            onStarted={(m) => void navigate(paths.mesh(m.id))}
          />
        )
      ) : null}
      <h2>Recent</h2>
      <RecentMeshes meshPath={paths.mesh} />
    </>
  );
}
