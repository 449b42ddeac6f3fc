import { Link } from 'react-router';
import { Empty, ErrorState, Loading } from '../../components/Status';
import { PageHeader } from '../../components/PageHeader';
import { paths } from '../../config/paths';
import { useHosts } from '../../features/hosts/api/get-hosts';
import { AddHost } from '../../features/hosts/components/AddHost';
import { HostCard } from '../../features/hosts/components/HostCard';
import { useAbilities } from '../../lib/auth/me';

export function HostsRoute() {
  const hosts = useHosts();
  const can = useAbilities();
  // Revoked hosts last: they keep their history but run nothing.
  const list = hosts.data ? [...hosts.data.data].sort((a, b) => Number(a.revoked) - Number(b.revoked)) : [];
  return (
    <>
      <PageHeader title="Hosts">
        {can.administer ? <AddHost /> : null}
        {can.operate ? (
          <Link className="button button-primary" to={paths.newJob()}>
            New job
          </Link>
        ) : null}
      </PageHeader>
      {hosts.isPending ? (
        <Loading label="Loading hosts…" />
      ) : hosts.isError ? (
        <ErrorState error={hosts.error} title="Could not load hosts" onRetry={() => void hosts.refetch()} />
      ) : list.length === 0 ? (
        <Empty>
          <p>No host has registered yet.</p>
          <p className="muted small">
            {can.administer
              ? 'Press “Add host” for a command to paste on the target host; it appears here within seconds.'
              : 'An admin adds hosts (Hosts → Add host); they appear here within seconds.'}
          </p>
        </Empty>
      ) : (
        <>
          {hosts.data && hosts.data.count > list.length ? (
            <p className="muted small" role="status">
              Showing the first {list.length.toLocaleString('en-US')} of {hosts.data.count.toLocaleString('en-US')}{' '}
              hosts (the API serves hosts in pages: GET /api/hosts?offset=…).
            </p>
          ) : null}
          <div className="card-grid">
            {list.map((h) => (
              <HostCard key={h.id} host={h} now={hosts.dataUpdatedAt} can={can} />
            ))}
          </div>
        </>
      )}
    </>
  );
}
