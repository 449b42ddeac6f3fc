// The results of any experiment, generic over its matrix: per operation a table (threads × block
// size) and grouped bar charts — throughput with stddev whiskers, and latency where the rows carry
// latency extras. The peak note says why an efficiency is missing.
import { useMemo } from 'react';
import { GroupedBarChart } from '../../../components/chart/GroupedBarChart';
import type { RunResult } from '../../../lib/api/types';
import { groupMatrix, opLabel, type OpMatrix } from '../../../lib/matrix';
import type { Theme } from '../../../lib/theme';
import { lowerIsBetter } from '../../../lib/units';
import { latencyBars, throughputBars } from '../lib/chart-data';
import { MatrixTable } from './MatrixTable';

export interface ResultsViewProps {
  result: RunResult;
  theme: Theme;
  /** Prefix of downloaded PNG names, e.g. "hostbench-run-12". */
  fileBase: string;
  /** Hide the charts (e.g. a trace run, whose chart is the trace itself). */
  charts?: boolean;
}

export function ResultsView({ result, theme, fileBase, charts = true }: ResultsViewProps) {
  const matrices = useMemo(() => groupMatrix(result.rows), [result.rows]);
  if (result.rows.length === 0) return <p className="state state-empty">The run finished without result rows.</p>;
  return (
    <div className="results">
      {result.peak_note ? (
        <p className="muted small" role="note">
          Efficiency unavailable: {result.peak_note}
        </p>
      ) : null}
      {matrices.map((m) => (
        <OpResults key={m.op ?? ''} matrix={m} titled={matrices.length > 1 || Boolean(m.op)} peakNote={result.peak_note} theme={theme} fileBase={fileBase} charts={charts} />
      ))}
    </div>
  );
}

interface OpResultsProps {
  matrix: OpMatrix;
  titled: boolean;
  peakNote: string | null | undefined;
  theme: Theme;
  fileBase: string;
  charts: boolean;
}

function OpResults({ matrix: m, titled, peakNote, theme, fileBase, charts }: OpResultsProps) {
  const tp = useMemo(() => throughputBars(m), [m]);
  const lat = useMemo(() => latencyBars(m), [m]);
  const name = opLabel(m.op);
  const slug = `${fileBase}-${(m.op ?? 'result').replace(/[^a-z0-9]+/gi, '-')}`;
  return (
    <section className="result-op" aria-label={`${name} results`}>
      {titled ? <h3 className="result-op-title">{name}</h3> : null}
      <MatrixTable matrix={m} peakNote={peakNote} />
      {charts ? (
        <div className="chart-grid">
          <GroupedBarChart
            title={`${name}: ${lowerIsBetter(m.unit) ? 'latency' : 'throughput'}`}
            subtitle={`mean, whiskers ± stddev (${m.unit})`}
            categories={tp.categories}
            series={tp.series}
            unit={tp.unit}
            xTitle={tp.xTitle}
            theme={theme}
            fileName={`${slug}-throughput.png`}
          />
          {lat ? (
            <GroupedBarChart
              title={`${name}: latency`}
              subtitle={`averaged over repeats (${lat.unit})`}
              categories={lat.categories}
              series={lat.series}
              unit={lat.unit}
              xTitle={lat.xTitle}
              theme={theme}
              fileName={`${slug}-latency.png`}
            />
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
