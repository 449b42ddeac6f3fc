// The run page composes two features: the run itself (runs) and its live samples (live-run). The
// server pushes RunPublic over the same event stream; we copy it into the query cache so every view
// of this run agrees.
import { useEffect, useMemo, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { CopyLinkButton } from '../../components/CopyLinkButton';
import { ErrorState, Loading } from '../../components/Status';
import { PageHeader } from '../../components/PageHeader';
import { RunStatusBadge } from '../../components/RunStatusBadge';
import { paths } from '../../config/paths';
import { ApiError, errorMessage } from '../../lib/api/errors';
import { isActive, type Experiment, type RunPublic } from '../../lib/api/types';
import { useAbilities } from '../../lib/auth/me';
import { roleOfRun } from '../../lib/experiments';
import { useTheme, type Theme } from '../../lib/theme';
import { RunExportLinks } from '../../features/export/components/RunExportLinks';
import { useExperiments } from '../../features/jobs/api/get-experiments';
import { axesOf } from '../../lib/axes';
import { useRunSamples, type RunStreamSnapshot } from '../../features/live-run/hooks/use-run-samples';
import { LiveRunChart } from '../../features/live-run/components/LiveRunChart';
import { ResultsView } from '../../features/results/components/ResultsView';
import { RunVerdict } from '../../features/results/components/RunVerdict';
import { TraceView } from '../../features/results/components/TraceView';
import { getRunQueryOptions } from '../../features/runs/api/get-run';
import { useCancelRun } from '../../features/runs/api/cancel-run';
import { CancelRunDialog } from '../../features/runs/components/CancelRunDialog';
import { JobRuns } from '../../features/runs/components/JobRuns';
import { KernelInfo } from '../../features/runs/components/KernelInfo';
import { QueuePosition } from '../../features/runs/components/QueuePosition';
import { RunFacts } from '../../features/runs/components/RunFacts';
import { RunProgress } from '../../features/runs/components/RunProgress';

const connectionText = {
  connecting: 'connecting…',
  open: 'live',
  reconnecting: 'reconnecting…',
  closed: 'stream closed',
} as const;

/** The run's live stream and its query; the query polls while the stream is down, and takes every run the stream pushes. */
function useLiveRun(id: number, valid: boolean) {
  const qc = useQueryClient();
  const live = useRunSamples(valid ? id : null);
  const runQuery = useQuery({
    ...getRunQueryOptions(id),
    enabled: valid,
    // Fall back to polling while the live stream is down.
    refetchInterval: (q) => (live.connection !== 'open' && q.state.data && isActive(q.state.data.status) ? 5_000 : false),
  });
  useEffect(() => {
    if (live.run) qc.setQueryData(getRunQueryOptions(id).queryKey, live.run);
  }, [live.run, id, qc]);
  return { live, runQuery };
}

export function RunRoute() {
  const { id: idParam } = useParams();
  const id = Number(idParam);
  const valid = Number.isInteger(id) && id > 0;
  const { live, runQuery } = useLiveRun(id, valid);
  const cancel = useCancelRun(id);

  if (!valid) return <ErrorState error={new Error(`"${idParam}" is not a run id`)} title="Bad address" />;
  const run = live.run ?? runQuery.data;
  if (!run) {
    if (!runQuery.isError) return <Loading label={`Loading run #${id}…`} />;
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
  return (
    <>
      <RunPage run={run} live={live} cancel={cancel} />
      {runQuery.isError && live.run ? <p className="muted small">Run refresh failed: {errorMessage(runQuery.error)}</p> : null}
    </>
  );
}

interface RunPageProps {
  run: RunPublic;
  live: RunStreamSnapshot;
  cancel: ReturnType<typeof useCancelRun>;
}

function RunPage({ run, live, cancel }: RunPageProps) {
  const { theme } = useTheme();
  // What each experiment's runs are (a run's role in a two-host job); the page does without until it loads.
  const experiments: Experiment[] | undefined = useExperiments().data?.data;
  const [confirmCancel, setConfirmCancel] = useState(false);
  const active = isActive(run.status);
  const fileBase = `hostbench-run-${run.id}`;
  return (
    <>
      <RunHeader run={run} connection={live.connection} cancelling={cancel.isPending} onCancel={() => setConfirmCancel(true)} />
      {live.ended && live.samplesComplete === false ? (
        <p className="muted small" role="note">
          The host had not sent every sample of this run when the run ended. What it sends later is kept: reload the
          page to see it.
        </p>
      ) : null}
      {confirmCancel && active ? (
        <CancelRunDialog
          run={run}
          onClose={() => setConfirmCancel(false)}
          onConfirm={() => {
            setConfirmCancel(false);
            cancel.mutate();
          }}
        />
      ) : null}
      {cancel.isError ? <ErrorState error={cancel.error} title="Cancel failed" /> : null}
      {run.status_reason ? (
        <div className={`state ${run.status === 'failed' || run.status === 'untrusted' ? 'state-error' : 'state-empty'}`} role="note">
          <strong>{run.status}:</strong> {run.status_reason}
        </div>
      ) : null}

      {run.result ? <RunVerdict result={run.result} axes={axesOf(experiments, run.experiment)} /> : null}
      {run.result && run.result_updating ? (
        <p className="muted small" role="note">
          This host&apos;s peaks changed: the result is being recomputed against them. The figures below are the ones stored until then.
        </p>
      ) : null}

      <section className="card run-summary" aria-label="Run details">
        <RunProgress run={run} />
        <QueuePosition run={run} />
        <RunFacts run={run} />
        <KernelInfo info={run.kernel_info} />
      </section>

      <JobRuns run={run} experiments={experiments} />
      <p className="small">
        <Link to={`/report?job=${run.job_id}`}>Report of job {run.job_id}</Link> (every run of the job: tables, charts, methodology; HTML download)
      </p>
      <RunChart run={run} live={live} theme={theme} fileBase={fileBase} role={roleOfRun(experiments, run.experiment)} experiments={experiments} />

      <section className="card" aria-labelledby="results-heading">
        <h2 id="results-heading">Results</h2>
        {run.result ? (
          <ResultsView result={run.result} theme={theme} fileBase={fileBase} charts={!run.result.trace} axes={axesOf(experiments, run.experiment)} />
        ) : active ? (
          <p className="muted">Results appear here when the run finishes.</p>
        ) : (
          <p className="muted">This run has no results ({run.status}).</p>
        )}
      </section>
    </>
  );
}

interface RunHeaderProps {
  run: RunPublic;
  connection: RunStreamSnapshot['connection'];
  cancelling: boolean;
  onCancel: () => void;
}

/** Title, status, stream state; Cancel while active (operators), export and compare once finished. */
function RunHeader({ run, connection, cancelling, onCancel }: RunHeaderProps) {
  const can = useAbilities();
  const active = isActive(run.status);
  return (
    <PageHeader
      title={
        <>
          Run #{run.id} <span className="muted">· {run.experiment} on {run.host_name}</span>
        </>
      }
    >
      <RunStatusBadge status={run.status} />
      <span className={`conn conn-${connection}`} title="Live event stream">
        {/* ended, but the stream waits for what the host still sends of it (a run the server ended: docs/reliability.md) */}
        {connection === 'open' && !active ? 'receiving its last samples…' : connectionText[connection]}
      </span>
      {active && can.operate ? (
        <button type="button" className="button button-danger" onClick={onCancel} disabled={cancelling}>
          {cancelling ? 'Cancelling…' : 'Cancel run'}
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
  );
}

/** What the live chart says while it has no samples. */
function liveEmptyText(run: RunPublic, live: RunStreamSnapshot, role: string | undefined): string {
  if (role === 'serve' && !live.samples.length)
    return 'A serving run listens and records no samples: the drive run of this job (listed above) measures.';
  if (isActive(run.status)) return run.status === 'running' ? 'Waiting for the first sample…' : 'Waiting for the runner to start…';
  return live.ended ? 'This run recorded no samples.' : 'Loading samples…';
}

interface RunChartProps {
  run: RunPublic;
  live: RunStreamSnapshot;
  theme: Theme;
  fileBase: string;
  /** The run's role in its job ("serve": it listens and records no samples). */
  role: string | undefined;
  experiments: Experiment[] | undefined;
}

/** A trace (a run whose result has a trace summary) with samples draws as a trace; every other run as the live
 * throughput chart. */
function RunChart({ run, live, theme, fileBase, role, experiments }: RunChartProps) {
  const trace = run.result?.trace ?? null; // the server summarises a trace run kind's samples (the table's trace)
  // the run's words for its thread counts ("1 stream"), once per experiments answer (the chart memoises on it)
  const axes = useMemo(() => axesOf(experiments, run.experiment), [experiments, run.experiment]);
  return (
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
          emptyText={liveEmptyText(run, live, role)}
          axes={axes}
        />
      )}
    </section>
  );
}
