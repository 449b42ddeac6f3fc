import { useNavigate, useSearchParams } from 'react-router';
import { ErrorState, Loading } from '../../components/Status';
import { PageHeader } from '../../components/PageHeader';
import { paths } from '../../config/paths';
import { useHosts } from '../../features/hosts/api/get-hosts';
import { readCpu, readGpus } from '../../features/hosts/lib/inventory';
import { useExperiments } from '../../features/jobs/api/get-experiments';
import { NewJobForm } from '../../features/jobs/components/NewJobForm';
import { roleOfRun } from '../../lib/experiments';
import { RoleGate } from '../RoleGate';

export function NewJobRoute() {
  return (
    <RoleGate needed="operator" what="create jobs">
      <NewJob />
    </RoleGate>
  );
}

function NewJob() {
  const hosts = useHosts();
  const experiments = useExperiments();
  const [search] = useSearchParams();
  const navigate = useNavigate();
  const hostParam = Number(search.get('host'));
  const initialHostIds = Number.isInteger(hostParam) && hostParam > 0 ? [hostParam] : [];

  let body;
  if (hosts.isPending || experiments.isPending) body = <Loading label="Loading hosts and experiments…" />;
  else if (hosts.isError) body = <ErrorState error={hosts.error} title="Could not load hosts" onRetry={() => void hosts.refetch()} />;
  else if (experiments.isError)
    body = <ErrorState error={experiments.error} title="Could not load experiments" onRetry={() => void experiments.refetch()} />;
  else
    body = (
      <NewJobForm
        // A revoked host runs nothing: it is not offered.
        hosts={hosts.data.data
          .filter((h) => !h.revoked)
          .map((h) => ({
            id: h.id,
            name: h.name,
            online: h.online,
            cpus: readCpu(h.inventory).threads,
            gpus: readGpus(h.inventory),
            hostname: h.hostname,
            labels: Object.fromEntries(Object.entries(h.labels).filter(([, v]) => typeof v === 'string' && v !== '')) as Record<string, string>,
          }))}
        experiments={experiments.data.data}
        initialHostIds={initialHostIds}
        initialExperiment={search.get('experiment') ?? undefined}
        onCreated={(job) => {
          // A two-host job measures on its drive run; its serve run is linked from there.
          const shown = job.runs.find((r) => roleOfRun(experiments.data.data, r.experiment) === 'drive') ?? job.runs[0];
          void navigate(shown ? paths.run(shown.id) : paths.history());
        }}
      />
    );

  return (
    <>
      <PageHeader title="New job" />
      {body}
    </>
  );
}
