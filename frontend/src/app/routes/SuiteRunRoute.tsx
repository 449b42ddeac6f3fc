// One suite run (features/suites), its hosts by name (features/hosts) and its experiments by title (features/jobs).
import { Link, useParams } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import { ErrorState, Loading } from '../../components/Status';
import { paths } from '../../config/paths';
import { useHosts } from '../../features/hosts/api/get-hosts';
import { useExperiments } from '../../features/jobs/api/get-experiments';
import { useSuiteRun } from '../../features/suites/api/suites';
import { reportPath } from '../../features/report/lib/format';
import { SuiteRunView } from '../../features/suites/components/SuiteRunView';
import { useMe } from '../../lib/auth/me';
import { abilities } from '../../lib/auth/roles';
import { NotFoundRoute } from './NotFoundRoute';

export function SuiteRunRoute() {
  const { id } = useParams();
  const suiteRunId = Number(id);
  if (!Number.isInteger(suiteRunId) || suiteRunId <= 0) return <NotFoundRoute />;
  return <SuiteRunPage id={suiteRunId} />;
}

function SuiteRunPage({ id }: { id: number }) {
  const run = useSuiteRun(id);
  const hosts = useHosts();
  const experiments = useExperiments();
  const me = useMe();
  const can = abilities(me.data?.role);

  const hostName = (hostId: number) => hosts.data?.data.find((h) => h.id === hostId)?.name ?? `host #${hostId}`;
  const experimentTitle = (kind: string) =>
    experiments.data?.data.find((e) => e.kind === kind || e.run_kinds.includes(kind))?.title ?? kind;

  return (
    <>
      <PageHeader title={run.data ? `${run.data.title} · suite run #${id}` : `Suite run #${id}`}>
        <Link to="/suites" className="button button-ghost">
          All suites
        </Link>
      </PageHeader>
      {run.isPending ? (
        <Loading label="Loading the suite run…" />
      ) : run.isError ? (
        <ErrorState error={run.error} title="Could not load the suite run" onRetry={() => void run.refetch()} />
      ) : (
        <SuiteRunView run={run.data} hostName={hostName} experimentTitle={experimentTitle} runPath={paths.run} reportHref={reportPath({ suite: run.data.id })} canOperate={can.operate} />
      )}
    </>
  );
}
