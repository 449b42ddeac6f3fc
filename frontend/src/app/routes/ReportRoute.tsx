// /report?runs=1,2,3, /report?job=7 or /report?suite=3: the report feature's page, with each run's verdict, charts and trace from
// the results feature (the same components as a run's page).
import { useLocation } from 'react-router';
import { ErrorState, Loading } from '../../components/Status';
import { useExperiments } from '../../features/jobs/api/get-experiments';
import { ReportPage } from '../../features/report/components/ReportPage';
import { reportHtmlUrl, useReport, type ReportRun } from '../../features/report/api/get-report';
import { readSelection } from '../../features/report/lib/format';
import { ResultsView } from '../../features/results/components/ResultsView';
import { RunVerdict } from '../../features/results/components/RunVerdict';
import { TraceView } from '../../features/results/components/TraceView';
import type { Sample } from '../../lib/api/types';
import { axesOf } from '../../lib/axes';
import { useTheme } from '../../lib/theme';

/** A trace run's points (seconds since the first, value) as the samples TraceView draws. */
function traceSamples(run: ReportRun): Sample[] {
  return (run.trace_points ?? []).map((p, seq) => ({
    seq, t: p[0] ?? 0, value: p[1] ?? 0, interval_s: run.trace_bucket ?? 1, threads: 1, repeat: 1, warmup: false, unit: run.unit, op: null, block_bytes: null,
  }));
}

export function ReportRoute() {
  const { search } = useLocation();
  const sel = readSelection(search);
  const report = useReport(sel);
  const { theme } = useTheme();
  const experiments = useExperiments().data?.data;
  if (!sel) return <ErrorState title="No runs named" error={new Error('Open a report as /report?runs=1,2,3, /report?job=7 or /report?suite=3.')} />;
  if (report.isPending) return <Loading label="Loading the report…" />;
  if (report.isError) return <ErrorState title="The report could not be loaded" error={report.error} />;
  return (
    <ReportPage
        report={report.data}
        htmlUrl={reportHtmlUrl(sel)}
        axesOf={(run) => axesOf(experiments, run.experiment)}
        renderRun={(run) =>
          run.result ? (
            <>
              <RunVerdict result={run.result} axes={axesOf(experiments, run.experiment)} />
              <ResultsView result={run.result} theme={theme} fileBase={`hostbench-run-${run.id}`} charts={!run.result.trace} axes={axesOf(experiments, run.experiment)} />
              {run.result.trace ? (
                <TraceView trace={run.result.trace} samples={traceSamples(run)} t0={0} unit={run.unit} theme={theme} fileName={`hostbench-run-${run.id}-trace.png`} />
              ) : null}
            </>
          ) : null
        }
      />
  );
}
