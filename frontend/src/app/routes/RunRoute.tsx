// The run page composes two features: the run itself (runs) and its live samples (live-run). The
// server pushes RunPublic over the same event stream; we copy it into the query cache so every view
// of this run agrees.
import { useEffect, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { CopyLinkButton } from '../../components/CopyLinkButton';
import { ConfirmDialog } from '../../components/Dialog';
import { ErrorState, Loading } from '../../components/Status';
import { PageHeader } from '../../components/PageHeader';
import { RunStatusBadge } from '../../components/RunStatusBadge';
import { paths } from '../../config/paths';
import { ApiError, errorMessage } from '../../lib/api/errors';
import { isActive } from '../../lib/api/types';
import { formatDateTime, paramSummary } from '../../lib/format';
import { useAbilities } from '../../lib/auth/me';
import { useTheme } from '../../lib/theme';
import { RunExportLinks } from '../../features/export/components/RunExportLinks';
import { useRunSamples } from '../../features/live-run/hooks/use-run-samples';
import { LiveRunChart } from '../../features/live-run/components/LiveRunChart';
import { ResultsView } from '../../features/results/components/ResultsView';
import { RunVerdict } from '../../features/results/components/RunVerdict';
import { TraceView } from '../../features/results/components/TraceView';
import { getRunQueryOptions } from '../../features/runs/api/get-run';
import { useCancelRun } from '../../features/runs/api/cancel-run';
import { JobRuns } from '../../features/runs/components/JobRuns';
import { KernelInfo } from '../../features/runs/components/KernelInfo';
import { QueuePosition } from '../../features/runs/components/QueuePosition';
import { RunProgress } from '../../features/runs/components/RunProgress';

const connectionText = {
  connecting: 'connecting…',
  open: 'live',
  reconnecting: 'reconnecting…',
  closed: 'stream closed',
} as const;

export function RunRoute() {
  const { id: idParam } = useParams();
  const id = Number(idParam);
  const valid = Number.isInteger(id) && id > 0;
  const qc = useQueryClient();
  const { theme } = useTheme();
  const live = useRunSamples(valid ? id : null);
  const runQuery = useQuery({
    ...getRunQueryOptions(id),
    enabled: valid,
    // Fall back to polling while the live stream is down.
    refetchInterval: (q) => (live.connection !== 'open' && q.state.data && isActive(q.state.data.status) ? 5_000 : false),
  });
  const cancel = useCancelRun(id);
  const [confirmCancel, setConfirmCancel] = useState(false);
  const can = useAbilities();

  useEffect(() => {
    if (live.run) qc.setQueryData(getRunQueryOptions(id).queryKey, live.run);
  }, [live.run, id, qc]);

  if (!valid) return <ErrorState error={new Error(`"${idParam}" is not a run id`)} title="Bad address" />;
  const run = live.run ?? runQuery.data;
  if (!run) {
    if (runQuery.isError) {
      const notFound = runQuery.error instanceof ApiError && runQuery.error.status === 404;
      return (
        <>
          <PageHeader title={`Run #${id}`} />
          <ErrorState error={runQuery.error} title={notFound ? 'Run not found' : 'Could not load the run'} onRetry={() => void runQuery.refetch()} />
          <p>
            <Link to={paths.history()}>All runs</Link>
          </p>
        </>
      );
    }
    return <Loading label={`Loading run #${id}…`} />;
  }

  const active = isActive(run.status);
  const trace = run.experiment === 'cpu_trace' ? run.result?.trace : null;
  const fileBase = `hostbench-run-${run.id}`;
  return (
    <>
      <PageHeader
        title={
          <>
            Run #{run.id} <span className="muted">· {run.experiment} on {run.host_name}</span>
          </>
        }
      >
        <RunStatusBadge status={run.status} />
        <span className={`conn conn-${live.connection}`} title="Live event stream">
          {connectionText[live.connection]}
        </span>
        {active && can.operate ? (
          <button type="button" className="button button-danger" onClick={() => setConfirmCancel(true)} disabled={cancel.isPending}>
            {cancel.isPending ? 'Cancelling…' : 'Cancel run'}
          </button>
        ) : active ? null : (
          <>
            <RunExportLinks runId={run.id} />
            <Link className="button button-small" to={paths.compare([run.id], run.id)}>
              Compare…
            </Link>
          </>
        )}
        <CopyLinkButton />
      </PageHeader>

      {confirmCancel && active ? (
        <ConfirmDialog
          title={`Cancel run #${run.id}?`}
          confirmLabel="Cancel the run"
          closeLabel="Keep it running"
          onClose={() => setConfirmCancel(false)}
          onConfirm={() => {
            setConfirmCancel(false);
            cancel.mutate();
          }}
        >
          <p>
            The runner on {run.host_name} stops the kernel at its next check-in (within seconds). The samples so far stay on this page; the run ends{' '}
            <strong>cancelled</strong>, without results.
          </p>
        </ConfirmDialog>
      ) : null}
      {cancel.isError ? <ErrorState error={cancel.error} title="Cancel failed" /> : null}
      {run.status_reason ? (
        <div className={`state ${run.status === 'failed' || run.status === 'untrusted' ? 'state-error' : 'state-empty'}`} role="note">
          <strong>{run.status}:</strong> {run.status_reason}
        </div>
      ) : null}

      {run.result ? <RunVerdict result={run.result} /> : null}

      <section className="card run-summary" aria-label="Run details">
        <RunProgress run={run} />
        <QueuePosition run={run} />
        <dl className="facts facts-inline">
          <div>
            <dt>Parameters</dt>
            <dd className="params">{paramSummary(run.params)}</dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>{formatDateTime(run.created_at)}</dd>
          </div>
          <div>
            <dt>Started</dt>
            <dd>{formatDateTime(run.started_at)}</dd>
          </div>
          <div>
            <dt>Finished</dt>
            <dd>{formatDateTime(run.finished_at)}</dd>
          </div>
          <div>
            <dt>Attempt</dt>
            <dd>{run.attempt}</dd>
          </div>
          <div>
            <dt>Created by</dt>
            <dd>{run.created_by ?? <span className="muted">unknown</span>}</dd>
          </div>
          {run.cancelled_by ? (
            <div>
              <dt>Cancelled by</dt>
              <dd>{run.cancelled_by}</dd>
            </div>
          ) : null}
        </dl>
        <KernelInfo info={run.kernel_info} />
      </section>

      <JobRuns run={run} />

      <section className="card" aria-label={trace ? 'Trace' : 'Live chart'}>
        {trace && live.samples.length ? (
          <TraceView trace={trace} samples={live.samples} t0={live.t0} unit={run.unit} theme={theme} fileName={`${fileBase}-trace.png`} />
        ) : (
        <LiveRunChart
          samples={live.samples}
          t0={live.t0}
          unit={run.unit}
          theme={theme}
          fileName={`${fileBase}-live.png`}
          emptyText={
            run.experiment === 'network_serve' && !live.samples.length
              ? 'A serving run listens and records no samples: the drive run of this job (listed above) measures.'
              : active
              ? run.status === 'running'
                ? 'Waiting for the first sample…'
                : 'Waiting for the runner to start…'
              : live.ended
                ? 'This run recorded no samples.'
                : 'Loading samples…'
          }
        />
        )}
      </section>

      <section className="card" aria-labelledby="results-heading">
        <h2 id="results-heading">Results</h2>
        {run.result ? (
          <ResultsView result={run.result} theme={theme} fileBase={fileBase} charts={run.experiment !== 'cpu_trace'} />
        ) : active ? (
          <p className="muted">Results appear here when the run finishes.</p>
        ) : (
          <p className="muted">This run has no results ({run.status}).</p>
        )}
      </section>
      {runQuery.isError && live.run ? <p className="muted small">Run refresh failed: {errorMessage(runQuery.error)}</p> : null}
    </>
  );
}
