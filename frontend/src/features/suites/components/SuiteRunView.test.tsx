import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { renderWithProviders } from '../../../test/render';
import type { SuiteRun } from '../api/suites';
import { runTook, suiteSummary } from '../lib/describe';
import { SuiteRunView } from './SuiteRunView';

const run = (over: Partial<SuiteRun['runs'][number]>): SuiteRun['runs'][number] => ({
  id: 1, job_id: 1, host_id: 7, experiment: 'cpu', op: 'fp64', status: 'succeeded', expected_duration_s: 60,
  typical_duration_s: 20, started_at: null, finished_at: null, headline: null, verdict: null, ...over,
});

const finished: SuiteRun = {
  id: 4, suite: 'quick', title: 'Quick health check', created_at: '2026-11-29T03:00:00Z', created_by: 'vera',
  cancelled_by: null, host_ids: [7], peer_host_id: null, skipped: [], expected_duration_s: 200, typical_duration_s: 90,
  status: 'failed', runs_total: 3, runs_done: 3, progress: 1,
  runs: [
    run({ id: 11, started_at: '2026-11-29T03:00:01Z', finished_at: '2026-11-29T03:00:31Z', headline: 'best 47.7 GFLOP/s', verdict: 'valid' }),
    run({ id: 12, op: 'int32', started_at: '2026-11-29T03:00:32Z', finished_at: '2026-11-29T03:01:32Z', headline: 'no valid row; 2 oversubscribed', verdict: 'oversubscribed' }),
    run({ id: 13, experiment: 'memory', op: 'copy', status: 'failed', started_at: '2026-11-29T03:01:33Z', finished_at: '2026-11-29T03:02:10Z' }),
  ],
};

describe('SuiteRunView', () => {
  it('leads a finished suite with its summary, and lists each run’s verdict, headline, duration and end', () => {
    renderWithProviders(
      <SuiteRunView run={finished} hostName={() => 'lab-1'} experimentTitle={(k) => k.toUpperCase()} runPath={(id) => `/runs/${id}`} reportHref="/report" canOperate={false} />,
    );
    const summary = screen.getByRole('region', { name: 'Summary' });
    expect(summary).toHaveTextContent('2 of 3 runs succeeded (1 failed); verdicts: 1 valid, 1 oversubscribed; took 2 min 10 s; ended');
    const rows = within(screen.getByRole('table', { name: 'Runs of suite run #4' })).getAllByRole('row');
    expect(rows[0]).toHaveTextContent(/Verdict.*Headline.*Expected.*Took.*Ended/);
    expect(rows[1]).toHaveTextContent('valid');
    expect(rows[1]).toHaveTextContent('best 47.7 GFLOP/s');
    expect(rows[1]).toHaveTextContent('FP64 FLOPS'); // the op in words, not its key
    expect(rows[1]).toHaveTextContent('30 s');
    expect(rows[2]).toHaveTextContent('oversubscribed');
    expect(rows[2]).toHaveTextContent(/≈ 20 s1 min/); // expected ≈ 20 s, took 1 min
    expect(rows[3]).toHaveTextContent('failed');
    // the summary comes before the rest of the page
    expect(summary.compareDocumentPosition(screen.getByRole('region', { name: 'Suite run' })) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
  });

  it('shows no summary while the suite runs', () => {
    renderWithProviders(
      <SuiteRunView run={{ ...finished, status: 'running', runs_done: 1 }} hostName={() => 'lab-1'} experimentTitle={(k) => k} runPath={(id) => `/runs/${id}`} reportHref="/report" canOperate={false} />,
    );
    expect(screen.queryByRole('region', { name: 'Summary' })).not.toBeInTheDocument();
  });

  it('a run that has not both ends has no duration', () => {
    expect(runTook({ status: 'queued' })).toBeNull();
    expect(runTook({ status: 'succeeded', started_at: '2026-11-29T03:00:00Z', finished_at: '2026-11-29T03:00:05Z' })).toBe(5);
    expect(suiteSummary('2026-11-29T03:00:00Z', [{ status: 'cancelled' }]).text).toBe('0 of 1 run succeeded (1 cancelled)');
  });
});
