// The report of a set of runs: its summary first (ReportSummary: what was measured, the headlines with their
// verdicts, what to look at first), then the machine inventory; per area each run's table (mean ± sd, 95 % CI, peak with its
// arithmetic, efficiency, ours beside the reference tool, the verdict in words), its charts and trace (given by
// the page that composes this, from the results feature), and the methodology paragraphs. Print gives the PDF.
import type { ReactNode } from 'react';
import './report.css';
import type { ResultRow } from '../../../lib/api/types';
import { decimalsFor, formatFixed, formatMeanSd } from '../../../lib/format';
import { FIELD_AXES, axisTitle, type AxesOf } from '../../../lib/axes';
import { formatDateTime } from '../../../lib/format';
import { opLabel } from '../../../lib/matrix';
import { formatBlockSize } from '../../../lib/units';
import type { Report, ReportRun } from '../api/get-report';
import { inventoryFacts, peakWords, referenceWords, verdictWords } from '../lib/format';
import { ReportSummary } from './ReportSummary';

export interface ReportPageProps {
  report: Report;
  htmlUrl: string;
  /** The run's verdict, charts and trace (the results feature's components). */
  renderRun: (run: ReportRun) => ReactNode;
  /** What a run's rows' threads and block sizes are (lib/axes.ts axesOf): streams and message sizes for network. */
  axesOf?: (run: ReportRun) => AxesOf;
}

function ci(row: ResultRow): string {
  const d = decimalsFor(row.mean);
  if (row.ci95_low !== null && row.ci95_high !== null) return `${formatFixed(row.ci95_low, d)} – ${formatFixed(row.ci95_high, d)} ${row.unit}`;
  return row.n > 1 ? '— (spread too wide)' : '— (one repeat)';
}

function RowsTable({ run, axes }: { run: ReportRun; axes: AxesOf }) {
  const rows = run.result?.rows ?? [];
  if (!rows.length) return null;
  const words = axes(rows[0]?.op);
  return (
    <table className="report-rows">
      <thead>
        <tr>
          <th>Op</th><th>{axisTitle(words.counts)}</th><th>{axisTitle(words.size)}</th><th>Mean ± sd</th><th>95 % CI</th><th>n</th><th>Peak (arithmetic)</th><th>Efficiency</th><th>Reference</th><th>Verdict</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r, i) => {
          const d = decimalsFor(r.mean);
          return (
            <tr key={i} data-verdict={r.verdict ?? 'valid'} className={r.verdict === 'invalid' ? 'cell-invalid' : r.verdict && r.verdict !== 'valid' ? 'cell-caution' : undefined}>
              <td>{r.op ? opLabel(r.op) : '—'}</td>
              <td className="num">{r.threads}</td>
              <td>{r.block_bytes !== null && r.block_bytes !== undefined ? formatBlockSize(r.block_bytes) : '—'}</td>
              <td className="num">{`${formatMeanSd(r.mean, r.stddev, r.n, d)} ${r.unit}`}</td>
              <td className="num">{ci(r)}</td>
              <td className="num">{r.n}</td>
              <td>{peakWords(r, run.result?.peak_note)}</td>
              <td className="num">{r.efficiency !== null && r.efficiency !== undefined ? `${(r.efficiency * 100).toFixed(1)} %` : '—'}</td>
              <td>{referenceWords(r)}</td>
              <td>{verdictWords(r)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

export function ReportPage({ report, htmlUrl, renderRun, axesOf = () => () => FIELD_AXES }: ReportPageProps) {
  const byId = new Map(report.runs.map((r) => [r.id, r]));
  // each run's experiment in words, as the summary names it (the server's one naming)
  const titles = new Map(report.summary.runs.map((r) => [r.run_id, r.experiment]));
  return (
    <article className="report" aria-label="Report">
      <header className="report-head">
        <h1>Report: {report.selection}</h1>
        <p className="muted small">
          {report.runs.length} run(s) on {report.hosts.length} host(s), generated {formatDateTime(report.generated_at)}.
        </p>
        <p className="no-print">
          <a className="button button-primary" href={htmlUrl} download>
            Download HTML
          </a>{' '}
          <button type="button" className="button" onClick={() => window.print()}>
            Print / PDF
          </button>
        </p>
      </header>
      <ReportSummary summary={report.summary} />
      <section aria-label="Machines">
        <h2>Machines</h2>
        {report.hosts.map((h) => (
          <div key={h.id} className="report-host">
            <h3>
              {h.name} <span className="muted">({h.hostname})</span>
            </h3>
            <dl className="facts">
              {inventoryFacts(h.inventory).map(([k, v]) => (
                <div key={k} className="fact">
                  <dt>{k}</dt>
                  <dd>{v}</dd>
                </div>
              ))}
            </dl>
          </div>
        ))}
      </section>
      {report.areas.map((a) => (
        <section key={a.area} aria-label={a.title} className="report-area">
          <h2>{a.title}</h2>
          {a.run_ids.map((id) => {
            const run = byId.get(id);
            if (!run) return null;
            return (
              <section key={id} id={`run-${id}`} className="report-run" aria-label={`Run ${id}`}>
                <h3>
                  Run #{run.id}: {titles.get(run.id) ?? run.experiment} on {run.host_name}
                </h3>
                <p className="muted small">
                  Job {run.job_id} · {run.status}
                  {run.status_reason ? ` (${run.status_reason})` : ''} · params <code>{JSON.stringify(run.params)}</code>
                </p>
                {run.result ? null : <p>No result: the run did not finish with one.</p>}
                <RowsTable run={run} axes={axesOf(run)} />
                {renderRun(run)}
              </section>
            );
          })}
        </section>
      ))}
      <section aria-label="Methodology" className="report-methodology">
        <h2>Methodology</h2>
        <p>
          {report.statistics} <em>(docs/methodology/statistics.md)</em>
        </p>
        {report.areas.map((a) => (
          <p key={a.area}>
            <strong>{a.title}.</strong> {a.methodology} <em>({a.source})</em>
          </p>
        ))}
      </section>
    </article>
  );
}
