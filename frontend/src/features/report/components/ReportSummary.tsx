// The report's first screen (the server's report summary, app/reports/summary.py: the downloaded HTML shows the
// same): what was measured, on which hosts and when; each run's headline figure with its unit, the peak it is set
// against, its efficiency, the reference tool beside it and its verdict; and what to look at first.
import { verdictClass, verdictLabels } from '../../../components/ResultBadges';
import { formatDateTime, formatDuration, formatNumber, formatPercent } from '../../../lib/format';
import type { Report } from '../api/get-report';

type Summary = Report['summary'];

/** "from Nov 29, 2026, 3:01:05 AM to Nov 29, 2026, 4:10:00 AM" in the reader's local format. */
export function spanWords(s: Pick<Summary, 'started_at' | 'ended_at'>): string {
  if (s.started_at && s.ended_at) return `from ${formatDateTime(s.started_at)} to ${formatDateTime(s.ended_at)}`;
  return s.ended_at ? `ended ${formatDateTime(s.ended_at)}` : 'not run yet';
}

export function ReportSummary({ summary }: { summary: Summary }) {
  return (
    <section className="report-summary card" aria-label="Summary">
      <h2>Summary</h2>
      <p>
        <strong>Measured:</strong> {summary.experiments.join(', ')} on {summary.hosts.join(', ') || '—'}, {spanWords(summary)}.
      </p>
      <p>
        <strong>Look at first</strong> <span className="muted small">({summary.bounds})</span>:
      </p>
      <ul className="report-attention" aria-label="Look at first">
        {summary.attention.length ? (
          summary.attention.map((a, i) => (
            <li key={i} className={a.kind === 'no_result' || a.verdict === 'invalid' ? 'text-bad' : 'text-warn'}>
              {a.text}{' '}
              {a.run_ids.map((id) => (
                <a key={id} href={`#run-${id}`} className="report-attention-run">
                  #{id}
                </a>
              ))}
            </li>
          ))
        ) : (
          <li>Nothing: every verdict is valid, no headline is far from its peak or reference.</li>
        )}
      </ul>
      <div className="table-scroll">
        <table className="report-rows report-summary-runs">
          <caption className="visually-hidden">Each run&apos;s headline figure and verdict</caption>
          <thead>
            <tr>
              <th scope="col">Run</th><th scope="col">Experiment</th><th scope="col">Host</th><th scope="col">Headline</th><th scope="col">Where</th><th scope="col">Peak</th><th scope="col">Efficiency</th><th scope="col">Reference (ours / theirs)</th><th scope="col">Verdict</th><th scope="col">Took</th><th scope="col">Ended</th>
            </tr>
          </thead>
          <tbody>
            {summary.runs.map((r) => (
              <tr key={r.run_id} data-verdict={r.verdict ?? 'none'}>
                <td>
                  <a href={`#run-${r.run_id}`}>#{r.run_id}</a>
                </td>
                <td>{r.experiment}</td>
                <td>{r.host_name}</td>
                <td>{r.headline}</td>
                <td>{r.where ?? '—'}</td>
                <td className="num">{r.peak !== null && r.peak !== undefined ? `${formatNumber(r.peak)} ${r.peak_unit ?? ''}` : '—'}</td>
                <td className="num">{formatPercent(r.efficiency)}</td>
                <td>{r.reference ? `${r.reference}${r.reference_ratio != null ? ` (${formatNumber(r.reference_ratio, 3)})` : ''}` : '—'}</td>
                <td>{r.verdict ? <span className={`badge ${verdictClass(r.verdict)}`}>{verdictLabels[r.verdict]}</span> : r.status}</td>
                <td className="num">{formatDuration(r.took_s)}</td>
                <td>{formatDateTime(r.ended_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
