import { Link } from 'react-router';
import type { Check, Figure } from '../api/checks';
import { figureText, rangeText } from '../api/checks';
import { VerdictBadge } from '../../../components/VerdictBadge';
import { formatDateTime } from '../../../lib/format';

function Evidence({ f }: { f: Figure }) {
  const band = f.band;
  const basis =
    f.status === 'disturbed' || f.status === 'not_judged'
      ? f.reason // not judged: why the measurement is not valid (or not the figure it stands for), not a band
      : band?.source === 'declared'
      ? `declared for ${band.kind}, version ${band.version ?? '?'}`
      : band
        ? `learned for ${band.kind} from ${band.siblings?.map((s) => s.host_name).join(', ') ?? ''}`
        : 'no band';
  return (
    <li>
      {figureText(f.figure)}: <strong>{f.value == null ? '—' : `${Number(f.value.toPrecision(4))} ${f.unit}`}</strong>
      {band ? ` vs ${rangeText(band)}` : ''}
      {f.distance != null && f.distance !== 0 ? ` (${(f.distance * 100).toFixed(1)} %)` : ''} — {basis};{' '}
      <Link to={`/runs/${f.run_id}`}>run {f.run_id}</Link>
    </li>
  );
}

/** A failure, a measurement not valid, or a figure not judged (a disk or network figure its host's CPU quota
 * throttled): each says why, with its run. */
const shownAsEvidence = (f: Figure) => f.status === 'fail' || f.status === 'disturbed' || f.status === 'not_judged';

export function CheckCard({ check }: { check: Check }) {
  return (
    <section className="card" aria-label={`Health check ${check.id}`}>
      <h2>
        Check {check.id}: {check.title} {check.label ? `(${check.label})` : ''}
      </h2>
      <p className="small muted">
        {check.status === 'running' ? `running (suite run ${check.suite_run_id ?? '—'})` : `judged ${formatDateTime(check.judged_at)}`} ·{' '}
        <a href={`/api/checks/${check.id}/report`}>report (HTML)</a>
      </p>
      <table className="table">
        <thead>
          <tr>
            <th>Host</th>
            <th>Verdict</th>
            <th>Why, and the evidence</th>
          </tr>
        </thead>
        <tbody>
          {check.hosts.map((h) => (
            <tr key={h.host_id}>
              <td>{h.host_name}</td>
              <td>
                <VerdictBadge verdict={h.verdict} />
              </td>
              <td>
                {h.reason}
                {h.in_turn ? <div className="small muted">{h.in_turn}</div> : null}
                {(h.figures ?? []).some(shownAsEvidence) ? (
                  <ul className="small">
                    {(h.figures ?? [])
                      .filter(shownAsEvidence)
                      .slice(0, 5)
                      .map((f) => (
                        <Evidence key={`${f.run_id}-${figureText(f.figure)}`} f={f} />
                      ))}
                  </ul>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
