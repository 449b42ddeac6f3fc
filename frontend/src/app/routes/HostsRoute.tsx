import { Link } from 'react-router';
import { Empty, ErrorState, Loading } from '../../components/Status';
import { PageHeader } from '../../components/PageHeader';
import { paths } from '../../config/paths';
import { useHosts } from '../../features/hosts/api/get-hosts';
import { HostCard } from '../../features/hosts/components/HostCard';

export function HostsRoute() {
  const hosts = useHosts();
  return (
    <>
      <PageHeader title="Hosts">
        <Link className="button button-primary" to={paths.newJob()}>
          New job
        </Link>
      </PageHeader>
      {hosts.isPending ? (
        <Loading label="Loading hosts…" />
      ) : hosts.isError ? (
        <ErrorState error={hosts.error} title="Could not load hosts" onRetry={() => void hosts.refetch()} />
      ) : hosts.data.data.length === 0 ? (
        <Empty>
          <p>No host has registered yet.</p>
          <p className="muted small">
            Start the runner daemon on a target host with a registration token; it appears here within seconds.
          </p>
        </Empty>
      ) : (
        <div className="card-grid">
          {hosts.data.data.map((h) => (
            <HostCard key={h.id} host={h} now={hosts.dataUpdatedAt} />
          ))}
        </div>
      )}
    </>
  );
}
