// History: every run, filtered on the server by host, labels, experiment, status and dates, one
// page at a time. Filters and page live in the URL; ticked runs go to Compare.
import { ReportLink } from '../../features/history/components/ReportLink';
import { useMemo, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { CopyLinkButton } from '../../components/CopyLinkButton';
import { PageHeader } from '../../components/PageHeader';
import { Empty, ErrorState, Loading } from '../../components/Status';
import { COMPARE_MAX_RUNS, paths } from '../../config/paths';
import { errorMessage } from '../../lib/api/errors';
import type { RunsQuery } from '../../lib/api/types';
import { HistoryFilters, type HostChoice } from '../../features/history/components/HistoryFilters';
import { HistoryTable } from '../../features/history/components/HistoryTable';
import { ImportedRowsTable } from '../../features/history/components/ImportedRowsTable';
import { useImports } from '../../features/history/api/get-imports';
import { PAGE_SIZE, activeFilterCount, clearFilters, readFilters, toRunsQuery, writeFilters } from '../../features/history/lib/filters';
import { useHosts } from '../../features/hosts/api/get-hosts';
import { readLabels } from '../../features/hosts/lib/inventory';
import { useExperiments } from '../../features/jobs/api/get-experiments';
import { getRuns, useRuns } from '../../features/runs/api/get-runs';
import { fetchAllRuns, historyCsv, historyJson } from '../../features/history/lib/export';
import { downloadText } from '../../lib/download';

/** Every run the filters match (all pages), downloaded as CSV or JSON; `exporting` says how it went. */
function useHistoryExport(query: RunsQuery) {
  const [exporting, setExporting] = useState<string | null>(null);
  const exportAs = async (format: 'csv' | 'json') => {
    setExporting('exporting…');
    try {
      const all = await fetchAllRuns(query, (q) => getRuns({ ...q, detail: 'full' }));
      const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
      if (format === 'csv') downloadText(historyCsv(all), `hostbench-history-${stamp}.csv`, 'text/csv');
      else downloadText(historyJson(all, query), `hostbench-history-${stamp}.json`, 'application/json');
      setExporting(`exported ${all.length} run${all.length === 1 ? '' : 's'}`);
    } catch (e) {
      setExporting(`export failed: ${errorMessage(e)}`);
    }
  };
  return { exporting, exportAs };
}

export function HistoryRoute() {
  const [search, setSearch] = useSearchParams();
  const { filters, page } = readFilters(search);
  const query = toRunsQuery(filters, page);
  const runs = useRuns(query);
  const hosts = useHosts();
  const experiments = useExperiments();
  const [selected, setSelected] = useState<number[]>([]);
  const { exporting, exportAs } = useHistoryExport(query);
  const imports = useImports(query.host_id ?? undefined);

  const hostChoices = useMemo<HostChoice[]>(
    () =>
      (hosts.data?.data ?? []).map((h) => {
        const l = readLabels(h);
        return { id: h.id, name: h.name, labels: { provider: l.provider, instanceType: l.instanceType, region: l.region } };
      }),
    [hosts.data],
  );
  const hostsById = useMemo(() => new Map(hostChoices.map((h) => [h.id, h])), [hostChoices]);

  const count = runs.data?.count ?? 0;
  const more = runs.data?.count_more ?? false;
  const toggle = (id: number, on: boolean) => setSelected((s) => (on ? (s.includes(id) ? s : [...s, id]) : s.filter((x) => x !== id)));

  return (
    <>
      <PageHeader title="History">
        <button type="button" className="button button-small" onClick={() => void exportAs('csv')} disabled={exporting === 'exporting…'}>
          Export CSV
        </button>
        <button type="button" className="button button-small" onClick={() => void exportAs('json')} disabled={exporting === 'exporting…'}>
          Export JSON
        </button>
        {exporting ? (
          <span className="small muted" role="status">
            {exporting}
          </span>
        ) : null}
        <CopyLinkButton />
        <ReportLink ids={selected} />
        {selected.length >= 2 ? (
          <Link className="button button-primary" to={paths.compare(selected, selected[0])}>
            Compare selected ({selected.length})
          </Link>
        ) : (
          <button type="button" className="button" disabled title="Tick two or more runs">
            Compare selected ({selected.length})
          </button>
        )}
      </PageHeader>
      <HistoryFilters
        filters={filters}
        hosts={hostChoices}
        experiments={experiments.data?.data ?? []}
        onChange={(patch) => setSearch(writeFilters(search, patch))}
        onClear={() => setSearch(clearFilters(search))}
      />
      {hosts.isError ? <p className="muted small">Host names for the filter could not be loaded: {errorMessage(hosts.error)}</p> : null}
      {runs.isPending ? (
        <Loading label="Loading runs…" />
      ) : runs.isError ? (
        <ErrorState error={runs.error} title="Could not load runs" onRetry={() => void runs.refetch()} />
      ) : runs.data.data.length === 0 ? (
        <Empty>
          <p>{activeFilterCount(filters) ? 'No run matches these filters.' : 'No runs yet.'}</p>
          <p>
            <Link to={paths.newJob()}>Start a job</Link>
          </p>
        </Empty>
      ) : (
        <>
          <p className="muted small" aria-live="polite">
            {more ? 'more than ' : ''}{count.toLocaleString()} run{count === 1 && !more ? '' : 's'} match · tick up to {COMPARE_MAX_RUNS} to compare
            {runs.isPlaceholderData ? ' · updating…' : ''}
          </p>
          <HistoryTable
            runs={runs.data.data}
            hostsById={hostsById}
            selected={new Set(selected)}
            onToggle={toggle}
            selectionFull={selected.length >= COMPARE_MAX_RUNS}
          />
          <Pager page={page} count={count} onPage={(p) => setSearch(writeFilters(search, { page: p }))} />
        </>
      )}
      {imports.data && imports.data.data.length > 0 ? (
        <section aria-labelledby="imported-heading">
          <h2 id="imported-heading">Imported reference outputs</h2>
          <p className="muted small">
            Outputs of reference tools imported from files (<code>./hostbench parse TOOL FILE --import</code>), not runs of
            hostbench: shown beside the history, never mixed into its figures.
          </p>
          <ImportedRowsTable rows={imports.data.data} />
        </section>
      ) : null}
    </>
  );
}

/** Previous / Next with the range shown, PAGE_SIZE runs a page. */
function Pager({ page, count, onPage }: { page: number; count: number; onPage: (page: number) => void }) {
  const first = page * PAGE_SIZE + 1;
  const last = Math.min(count, (page + 1) * PAGE_SIZE);
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" className="button" disabled={page === 0} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span className="small">
        {first}–{last} of {count}
      </span>
      <button type="button" className="button" disabled={last >= count} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}
