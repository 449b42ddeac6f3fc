import { useSearchParams } from 'react-router';
import { Empty, ErrorState, Loading } from '../../components/Status';
import { PageHeader } from '../../components/PageHeader';
import { RUN_STATUSES, type RunStatus, type RunsQuery } from '../../lib/api/types';
import { useExperiments } from '../../features/jobs/api/get-experiments';
import { useRuns } from '../../features/runs/api/get-runs';
import { RunsTable } from '../../features/runs/components/RunsTable';

const PAGE_SIZE = 25;

export function RunsRoute() {
  const [search, setSearch] = useSearchParams();
  const status = search.get('status') ?? '';
  const experiment = search.get('experiment') ?? '';
  const page = Math.max(0, Number(search.get('page') ?? '0') || 0);
  const query: RunsQuery = { limit: PAGE_SIZE, offset: page * PAGE_SIZE };
  if (status) query.status = status as RunStatus;
  if (experiment) query.experiment = experiment as NonNullable<RunsQuery['experiment']>;
  const runs = useRuns(query);
  const experiments = useExperiments();

  const update = (patch: Record<string, string>) => {
    const next = new URLSearchParams(search);
    for (const [k, v] of Object.entries(patch)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    setSearch(next);
  };

  const count = runs.data?.count ?? 0;
  const first = page * PAGE_SIZE + 1;
  const last = Math.min(count, (page + 1) * PAGE_SIZE);

  return (
    <>
      <PageHeader title="Runs" />
      <form className="filters" role="search" aria-label="Filter runs" onSubmit={(e) => e.preventDefault()}>
        <div className="field field-inline">
          <label htmlFor="runs-status">Status</label>
          <select id="runs-status" value={status} onChange={(e) => update({ status: e.target.value, page: '' })}>
            <option value="">any</option>
            {RUN_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div className="field field-inline">
          <label htmlFor="runs-experiment">Experiment</label>
          <select id="runs-experiment" value={experiment} onChange={(e) => update({ experiment: e.target.value, page: '' })}>
            <option value="">any</option>
            {(experiments.data?.data ?? []).map((x) => (
              <option key={x.kind} value={x.kind}>
                {x.title} ({x.kind})
              </option>
            ))}
          </select>
        </div>
      </form>
      {runs.isPending ? (
        <Loading label="Loading runs…" />
      ) : runs.isError ? (
        <ErrorState error={runs.error} title="Could not load runs" onRetry={() => void runs.refetch()} />
      ) : runs.data.data.length === 0 ? (
        <Empty>
          <p>{status || experiment ? 'No run matches these filters.' : 'No runs yet. Start one from New job.'}</p>
        </Empty>
      ) : (
        <>
          <RunsTable runs={runs.data.data} />
          <nav className="pager" aria-label="Pages">
            <button type="button" className="button" disabled={page === 0} onClick={() => update({ page: page > 1 ? String(page - 1) : '' })}>
              Previous
            </button>
            <span className="small" aria-live="polite">
              {first}–{last} of {count}
            </span>
            <button type="button" className="button" disabled={last >= count} onClick={() => update({ page: String(page + 1) })}>
              Next
            </button>
          </nav>
        </>
      )}
    </>
  );
}
