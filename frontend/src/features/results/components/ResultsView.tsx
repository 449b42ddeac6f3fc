// The results of any experiment, generic over its matrix: per operation a table (threads × block
// size, in the run's own words: streams × message size for network, lib/axes.ts) and grouped bar charts — throughput with stddev whiskers, and latency where the rows carry
// latency extras. The peak note says why an efficiency is missing; rows the kernel refused on this host
// (a working set that does not fit its memory) are listed with the reason.
import { useMemo } from 'react';
import { GroupedBarChart } from '../../../components/chart/GroupedBarChart';
import type { RunResult } from '../../../lib/api/types';
import { groupMatrix, hasBlocks, opLabel, type OpMatrix } from '../../../lib/matrix';
import type { Theme } from '../../../lib/theme';
import { FIELD_AXES, countWords, type Axes, type AxesOf } from '../../../lib/axes';
import { formatBlockSize, lowerIsBetter } from '../../../lib/units';
import { cacheMarkers, latencyBars, throughputBars } from '../lib/chart-data';
import { MatrixTable } from './MatrixTable';
import { ScalingTable, type StrongScaling } from './ScalingTable';

export interface ResultsViewProps {
  result: RunResult;
  theme: Theme;
  /** Prefix of downloaded PNG names, e.g. "hostbench-run-12". */
  fileBase: string;
  /** Hide the charts (e.g. a trace run, whose chart is the trace itself). */
  charts?: boolean;
  /** What the rows' threads and block sizes are, by op (lib/axes.ts axesOf: the run's experiment's words). */
  axes?: AxesOf;
}

export function ResultsView({ result, theme, fileBase, charts = true, axes = () => FIELD_AXES }: ResultsViewProps) {
  const matrices = useMemo(() => groupMatrix(result.rows), [result.rows]);
  if (result.rows.length === 0) return <p className="state state-empty">The run finished without result rows.</p>;
  return (
    <div className="results">
      {result.peak_note ? (
        <p className="muted small" role="note">
          Efficiency unavailable: {result.peak_note}
        </p>
      ) : null}
      {result.refused?.length ? (
        <div className="muted small" role="note" aria-label="Rows not run">
          <p>Not run on this host ({result.refused.length} row{result.refused.length === 1 ? '' : 's'}):</p>
          <ul>
            {result.refused.map((r) => (
              <li key={`${r.op ?? ''}-${r.block_bytes ?? ''}-${r.threads}`}>
                {opLabel(r.op)}
                {r.block_bytes != null ? `, ${formatBlockSize(r.block_bytes)}` : ''}, {countWords(axes(r.op), r.threads)}: {r.reason}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {matrices.map((m) => (
        <OpResults
          key={m.op ?? ''}
          matrix={m}
          titled={matrices.length > 1 || Boolean(m.op)}
          peakNote={result.peak_note}
          theme={theme}
          fileBase={fileBase}
          charts={charts}
          caches={result.caches}
          scaling={result.scaling?.find((s) => (s.op ?? null) === (m.op ?? null))}
          axes={axes(m.op)}
        />
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
  /** The host's detected cache sizes (memory runs), marked on the block-size axis. */
  caches?: RunResult['caches'];
  /** A fixed-work run's strong scaling of this operation (speedup, efficiency), if it is one. */
  scaling?: StrongScaling;
  axes: Axes;
}

function OpResults({ matrix: m, titled, peakNote, theme, fileBase, charts, caches, scaling, axes }: OpResultsProps) {
  const tp = useMemo(() => throughputBars(m, axes), [m, axes]);
  const lat = useMemo(() => latencyBars(m, axes), [m, axes]);
  const cacheLines = useMemo(() => (hasBlocks(m) ? cacheMarkers(m.blocks, caches) : []), [m, caches]);
  const name = opLabel(m.op);
  const slug = `${fileBase}-${(m.op ?? 'result').replace(/[^a-z0-9]+/gi, '-')}`;
  return (
    <section className="result-op" aria-label={`${name} results`}>
      {titled ? <h3 className="result-op-title">{name}</h3> : null}
      <MatrixTable matrix={m} peakNote={peakNote} axes={axes} />
      {scaling ? <ScalingTable scaling={scaling} /> : null}
      {charts ? (
        <div className="chart-grid">
          <GroupedBarChart
            title={`${name}: ${lowerIsBetter(m.unit) ? 'latency' : 'throughput'}`}
            subtitle={`mean, whiskers ± stddev (${m.unit})${cacheLines.length ? '; lines: the host\'s detected cache sizes' : ''}`}
            categories={tp.categories}
            series={tp.series}
            unit={tp.unit}
            xTitle={tp.xTitle}
            theme={theme}
            fileName={`${slug}-throughput.png`}
            markers={cacheLines}
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
