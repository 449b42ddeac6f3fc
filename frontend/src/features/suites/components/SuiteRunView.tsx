// One suite run as one unit: its status, a progress bar over all its runs, expected duration and elapsed, what
// was left out and why, and its runs. Operators may cancel it while it runs.
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { VerdictBadge } from '../../../components/ResultBadges';
import { RunStatusBadge } from '../../../components/RunStatusBadge';
import type { RunResult } from '../../../lib/api/types';
import { formatDateTime, formatDuration, formatPercent } from '../../../lib/format';
import { opLabel } from '../../../lib/matrix';
import { useCancelSuiteRun, type SuiteRun } from '../api/suites';
import { elapsedSince, formatEstimate, runTook, runsDoneText, suiteSummary } from '../lib/describe';
import { CancelSuiteDialog } from './CancelSuiteDialog';
import { SuiteStatusBadge } from './SuiteStatusBadge';

export interface SuiteRunViewProps {
  run: SuiteRun;
  hostName: (id: number) => string;
  experimentTitle: (kind: string) => string;
  runPath: (id: number) => string;
  /** The report page of this suite run (every run of it). */
  reportHref: string;
  canOperate: boolean;
}

function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return undefined;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [active]);
  return now;
}

export function SuiteRunView({ run, hostName, experimentTitle, runPath, reportHref, canOperate }: SuiteRunViewProps) {
  const running = run.status === 'running';
  const now = useNow(running);
  const [asking, setAsking] = useState(false);
  const cancel = useCancelSuiteRun(run.id);
  const pct = formatPercent(run.progress);
  const summary = running ? null : suiteSummary(run.created_at, run.runs);

  return (
    <>
      {summary ? (
        <section className="card suite-summary" aria-label="Summary">
          <h2 className="small-heading">Summary</h2>
          <p>
            {summary.text}
            {summary.lastEnd ? (
              <>
                ; ended <time dateTime={summary.lastEnd}>{formatDateTime(summary.lastEnd)}</time>
              </>
            ) : null}
            .
          </p>
        </section>
      ) : null}
      <section className="card" aria-label="Suite run">
        <div className="card-header">
          <p>
            Status: <SuiteStatusBadge status={run.status} />
          </p>
          <Link className="button" to={reportHref}>
            {running ? 'Report so far' : 'Report'}
          </Link>
          {running && canOperate ? (
            <button type="button" className="button button-danger" onClick={() => setAsking(true)}>
              Cancel suite
            </button>
          ) : null}
        </div>
        <div className="run-progress">
          <label htmlFor={`suite-run-${run.id}-progress`} className="small">
            {runsDoneText(run.runs_done, run.runs_total, run.progress)}
          </label>
          <progress id={`suite-run-${run.id}-progress`} max={1} value={run.progress} aria-valuetext={`${pct}`}>
            {pct}
          </progress>
        </div>
        <dl className="facts">
          <div>
            <dt>Expected duration</dt>
            <dd>
              {run.typical_duration_s !== null && run.typical_duration_s !== undefined
                ? `usually ${formatEstimate(run.typical_duration_s)}, cap ${formatEstimate(run.expected_duration_s)}`
                : formatEstimate(run.expected_duration_s)}
            </dd>
          </div>
          {running ? (
            <div>
              <dt>Elapsed</dt>
              <dd>{formatDuration(elapsedSince(run.created_at, now))}</dd>
            </div>
          ) : null}
          <div>
            <dt>Started</dt>
            <dd>
              {formatDateTime(run.created_at)}
              {run.created_by ? ` by ${run.created_by}` : ''}
            </dd>
          </div>
          <div>
            <dt>Hosts</dt>
            <dd>{run.host_ids.map(hostName).join(', ')}</dd>
          </div>
          {run.peer_host_id != null ? (
            <div>
              <dt>Peer (serves the two-host items)</dt>
              <dd>{hostName(run.peer_host_id)}</dd>
            </div>
          ) : null}
          {run.cancelled_by ? (
            <div>
              <dt>Cancelled by</dt>
              <dd>{run.cancelled_by}</dd>
            </div>
          ) : null}
        </dl>
        {cancel.isError && !asking ? (
          <p className="field-error" role="alert">
            Could not cancel: {cancel.error.message}
          </p>
        ) : null}
      </section>

      {run.skipped.length ? (
        <section aria-labelledby={`suite-run-${run.id}-skipped`}>
          <h2 id={`suite-run-${run.id}-skipped`}>Left out on these hosts</h2>
          <ul>
            {run.skipped.map((why) => (
              <li key={why}>{why}</li>
            ))}
          </ul>
        </section>
      ) : null}

      <section aria-labelledby={`suite-run-${run.id}-runs`}>
        <h2 id={`suite-run-${run.id}-runs`}>Runs</h2>
        <div className="table-scroll">
          <table className="table" aria-label={`Runs of suite run #${run.id}`}>
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Experiment</th>
                <th scope="col">Op</th>
                <th scope="col">Host</th>
                <th scope="col">Status</th>
                <th scope="col">Verdict</th>
                <th scope="col">Headline</th>
                <th scope="col" className="num">
                  Expected
                </th>
                <th scope="col" className="num">
                  Took
                </th>
                <th scope="col">Ended</th>
              </tr>
            </thead>
            <tbody>
              {run.runs.map((r) => (
                <tr key={r.id}>
                  <th scope="row">
                    <Link to={runPath(r.id)}>#{r.id}</Link>
                  </th>
                  <td>{experimentTitle(r.experiment)}</td>
                  <td>{r.op ? opLabel(r.op) : '—'}</td>
                  <td>{hostName(r.host_id)}</td>
                  <td>
                    <RunStatusBadge status={r.status} />
                  </td>
                  <td>{r.verdict ? <VerdictBadge verdict={r.verdict as RunResult['verdict']} showReasons={false} /> : '—'}</td>
                  <td>{r.headline ?? '—'}</td>
                  <td className="num" title={`cap ${formatEstimate(r.expected_duration_s)}`}>
                    {formatEstimate(r.typical_duration_s ?? r.expected_duration_s)}
                  </td>
                  <td className="num">
                    {runTook(r) !== null ? formatDuration(runTook(r)) : r.started_at && r.status === 'running' ? `${formatDuration(elapsedSince(r.started_at, now))} so far` : '—'}
                  </td>
                  <td>{r.finished_at ? <time dateTime={r.finished_at}>{formatDateTime(r.finished_at)}</time> : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>

      {asking ? (
        <CancelSuiteDialog
          run={run}
          pending={cancel.isPending}
          error={cancel.error}
          onClose={() => setAsking(false)}
          onConfirm={() => cancel.mutate(undefined, { onSuccess: () => setAsking(false) })}
        />
      ) : null}
    </>
  );
}
