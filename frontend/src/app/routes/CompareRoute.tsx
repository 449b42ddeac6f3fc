// Compare: the runs named in the URL (`?runs=1,2,3&baseline=1`), loaded with GET /api/runs?ids=…;
// trace runs overlaid from their stored samples; every run's matrix side by side as bars and as a
// table of ratios to the baseline; the comparison downloadable as CSV / JSON.
import { useMemo, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { CopyLinkButton } from '../../components/CopyLinkButton';
import { PageHeader } from '../../components/PageHeader';
import { Empty, ErrorState, Loading } from '../../components/Status';
import { paths } from '../../config/paths';
import { errorMessage } from '../../lib/api/errors';
import type { RunPublic, RunsQuery } from '../../lib/api/types';
import { downloadText } from '../../lib/download';
import { useTheme, type Theme } from '../../lib/theme';
import { CompareBars } from '../../features/compare/components/CompareBars';
import { RatioTable } from '../../features/compare/components/RatioTable';
import { RunPicker } from '../../features/compare/components/RunPicker';
import { TraceOverlay, type OverlayTrace } from '../../features/compare/components/TraceOverlay';
import { ratioTable, readSelection, runLabel, writeSelection, type CompareSelection, type RatioTable as Ratios } from '../../features/compare/lib/compare';
import { comparisonCsv, comparisonJson } from '../../features/compare/lib/export';
import { useHosts } from '../../features/hosts/api/get-hosts';
import { readLabels } from '../../features/hosts/lib/inventory';
import { useRunsSamples } from '../../features/runs/api/get-run-samples';
import { getRunsQueryOptions, useRuns } from '../../features/runs/api/get-runs';

const EMPTY: RunPublic[] = [];

/** The selected runs (in the URL's order), those with results, their labels and ratio table, and the trace runs' samples. */
function useComparison(selection: CompareSelection) {
  const hosts = useHosts();
  const selected = useQuery({ ...getRunsQueryOptions({ ids: selection.ids.join(','), limit: 50, detail: 'full' }), enabled: selection.ids.length > 0 });
  const byId = useMemo(() => new Map((selected.data?.data ?? EMPTY).map((r) => [r.id, r])), [selected.data]);
  const idsKey = selection.ids.join(',');
  const runs = useMemo(() => (idsKey ? idsKey.split(',').map(Number) : []).flatMap((id) => byId.get(id) ?? []), [idsKey, byId]);

  const withResults = useMemo(() => runs.filter((r) => r.result), [runs]);
  const instanceOf = useMemo(() => {
    const m = new Map<number, string | null>();
    for (const h of hosts.data?.data ?? []) m.set(h.id, readLabels(h).instanceType);
    return m;
  }, [hosts.data]);
  const labels = useMemo(() => withResults.map((r) => runLabel(r, instanceOf.get(r.host_id))), [withResults, instanceOf]);
  const baseline = withResults.some((r) => r.id === selection.baseline) ? selection.baseline : (withResults[0]?.id ?? null);
  const table = useMemo(() => ratioTable(withResults, baseline), [withResults, baseline]);

  const traceRuns = useMemo(() => withResults.filter((r) => r.result?.trace), [withResults]);
  const samples = useRunsSamples(traceRuns.map((r) => r.id));
  const traces = useMemo<OverlayTrace[]>(
    () => traceRuns.map((r, i) => ({ runId: r.id, label: labels[withResults.indexOf(r)] ?? `#${r.id}`, samples: samples.data[i], unit: r.unit })),
    [traceRuns, withResults, labels, samples.data],
  );
  return { selected, byId, runs, withResults, labels, table, traces, samples };
}

export function CompareRoute() {
  const [search, setSearch] = useSearchParams();
  const selection = readSelection(search);
  const { theme } = useTheme();
  const { selected, byId, runs, withResults, labels, table, traces, samples } = useComparison(selection);
  const firstExperiment = runs[0]?.experiment as RunsQuery['experiment'];
  const recent = useRuns({ limit: 20, status: 'succeeded', ...(firstExperiment ? { experiment: firstExperiment } : {}) });
  const pending = runs.filter((r) => !r.result);
  const experimentsSeen = [...new Set(runs.map((r) => r.experiment))];
  const change = (next: CompareSelection) => setSearch(writeSelection(search, next), { replace: false });
  const fileBase = `hostbench-compare-${withResults.map((r) => r.id).join('-')}`;

  let notice: ReactNode = null;
  if (selection.ids.length === 0) notice = <NothingToCompare />;
  else if (selected.isPending) notice = <Loading label="Loading runs…" />;
  else if (selected.isError) notice = <ErrorState error={selected.error} title="Could not load the runs" onRetry={() => void selected.refetch()} />;
  else if (runs.length === 0) notice = <NothingToCompare missing={selection.ids.length} />;
  else if (withResults.length < 2) notice = <TooFewResults withResults={withResults.length} />;

  return (
    <>
      <PageHeader title="Compare">
        <CopyLinkButton />
        {withResults.length >= 2 ? <ComparisonExport table={table} fileBase={fileBase} /> : null}
      </PageHeader>
      <RunPicker
        selection={selection}
        runsById={byId}
        loadingSelection={selected.isPending && selection.ids.length > 0}
        recent={recent.data?.data}
        recentError={recent.isError ? errorMessage(recent.error) : null}
        onChange={change}
      />
      {experimentsSeen.length > 1 ? (
        <p className="state state-empty" role="note">
          These runs are of different experiments ({experimentsSeen.join(', ')}): only the cells they share line up.
        </p>
      ) : null}
      {pending.length ? (
        <p className="muted small" role="note">
          Not compared yet (no result): {pending.map((r) => `#${r.id} (${r.status})`).join(', ')}.
        </p>
      ) : null}
      {notice ?? <Comparison table={table} labels={labels} traces={traces} samples={samples} theme={theme} />}
    </>
  );
}

/** No run picked yet, or (with `missing`) none of the ids picked exists. */
function NothingToCompare({ missing }: { missing?: number }) {
  return (
    <Empty>
      {missing === undefined ? (
        <p>Pick two or more runs to compare: tick them in the list above, add their ids, or select them in History.</p>
      ) : (
        <p>No run with {missing === 1 ? 'this id' : 'these ids'} exists: each is marked “not found” above.</p>
      )}
      <p>
        <Link to={paths.history()}>Go to History</Link>
      </p>
    </Empty>
  );
}

function TooFewResults({ withResults }: { withResults: number }) {
  return (
    <Empty>
      <p>
        {withResults === 0 ? 'None of these runs has a result yet.' : 'Only one of these runs has a result.'} Add another finished run to
        compare.
      </p>
    </Empty>
  );
}

function ComparisonExport({ table, fileBase }: { table: Ratios; fileBase: string }) {
  return (
    <span className="export-links" role="group" aria-label="Export comparison">
      <button type="button" className="button button-small" onClick={() => downloadText(comparisonCsv(table), `${fileBase}.csv`, 'text/csv')}>
        Download comparison CSV
      </button>
      <button type="button" className="button button-small" onClick={() => downloadText(comparisonJson(table), `${fileBase}.json`, 'application/json')}>
        Download comparison JSON
      </button>
    </span>
  );
}

interface ComparisonProps {
  table: Ratios;
  labels: string[];
  traces: OverlayTrace[];
  samples: ReturnType<typeof useRunsSamples>;
  theme: Theme;
}

/** Two or more runs with results: their traces overlaid (if any), bars side by side, ratios to the baseline. */
function Comparison({ table, labels, traces, samples, theme }: ComparisonProps) {
  return (
    <>
      {traces.length ? (
        <section className="card" aria-label="Overlaid traces">
          {samples.error ? <ErrorState error={samples.error} title="Could not load trace samples" /> : null}
          <TraceOverlay traces={traces} theme={theme} loading={samples.pending} />
        </section>
      ) : null}
      <section className="card" aria-labelledby="compare-bars-heading">
        <h2 id="compare-bars-heading">Side by side</h2>
        <CompareBars table={table} runLabels={labels} theme={theme} />
      </section>
      <section className="card" aria-labelledby="compare-ratios-heading">
        <h2 id="compare-ratios-heading">Ratios to the baseline</h2>
        <RatioTable table={table} runLabels={labels} />
      </section>
    </>
  );
}
