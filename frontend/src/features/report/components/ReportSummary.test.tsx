import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Report } from '../api/get-report';
import { ReportSummary, spanWords } from './ReportSummary';

// As GET /api/report gives it (app/reports/summary.py): a valid CPU run, a disturbed one, a failed one.
const summary: Report['summary'] = {
  hosts: ['e2e-host'],
  experiments: ['CPU throughput (2)', 'Memory (1)'],
  started_at: '2026-11-29T03:01:05.123456Z',
  ended_at: '2026-11-29T03:09:40.654321Z',
  bounds: 'a headline below 50 % of its peak, or off its reference tool\'s figure by more than a factor 1.25 either way',
  runs: [
    { run_id: 7, experiment: 'CPU throughput', host_name: 'e2e-host', status: 'succeeded', headline: 'best 52.3 GFLOP/s', value: 52.3, unit: 'GFLOP/s', where: 'fp64, 1 thread', peak: 59.2, peak_unit: 'GFLOP/s', efficiency: 0.884, reference: 'hpcc 50.1 GFLOP/s', reference_ratio: 1.04, verdict: 'valid', took_s: 65, ended_at: '2026-11-29T03:02:10.5Z' },
    { run_id: 8, experiment: 'CPU throughput', host_name: 'e2e-host', status: 'succeeded', headline: 'no valid row; 1 disturbed', value: null, unit: 'GFLOP/s', where: null, peak: null, peak_unit: null, efficiency: null, reference: null, reference_ratio: null, verdict: 'disturbed', took_s: 30, ended_at: '2026-11-29T03:05:00Z' },
    { run_id: 9, experiment: 'Memory', host_name: 'e2e-host', status: 'failed', headline: 'no result: kernel exited 2', value: null, unit: '', where: null, peak: null, peak_unit: null, efficiency: null, reference: null, reference_ratio: null, verdict: null, took_s: 4, ended_at: '2026-11-29T03:09:40.654321Z' },
  ],
  attention: [
    { run_ids: [9], kind: 'no_result', verdict: null, text: 'run 9 (Memory on e2e-host) failed: kernel exited 2' },
    { run_ids: [8, 10], kind: 'verdict', verdict: 'disturbed', text: '2 runs disturbed: 8, 10; run 8 (CPU throughput on e2e-host): CPU share 0.50' },
  ],
};

describe('ReportSummary (the report\'s first screen, issue 32)', () => {
  it('says what was measured, where and when, in words and local time, never raw ISO', () => {
    render(<ReportSummary summary={summary} />);
    const s = screen.getByRole('region', { name: 'Summary' });
    expect(s).toHaveTextContent('Measured: CPU throughput (2), Memory (1) on e2e-host, from ');
    expect(s.textContent).not.toMatch(/\d{2}:\d{2}:\d{2}\.\d/);
    expect(s.textContent).not.toMatch(/\d{4}-\d{2}-\d{2}T/);
    expect(spanWords({ started_at: null, ended_at: null })).toBe('not run yet');
  });

  it('lists what to look at first, each linked to its run, and every run with its headline, peak, reference and verdict', () => {
    render(<ReportSummary summary={summary} />);
    const look = screen.getByRole('list', { name: 'Look at first' });
    expect(within(look).getAllByRole('link').map((a) => a.getAttribute('href'))).toEqual(['#run-9', '#run-8', '#run-10']);
    expect(look).toHaveTextContent('2 runs disturbed: 8, 10; run 8 (CPU throughput on e2e-host): CPU share 0.50');
    const rows = screen.getAllByRole('row').slice(1);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toHaveTextContent('best 52.3 GFLOP/s');
    expect(rows[0]).toHaveTextContent('59.2 GFLOP/s');
    expect(rows[0]).toHaveTextContent('88.4 %');
    expect(rows[0]).toHaveTextContent('hpcc 50.1 GFLOP/s (1.04)');
    expect(rows[0]).toHaveTextContent('1 min 5 s');
    expect(within(rows[0]!).getByText('valid')).toBeInTheDocument();
    expect(rows[1]).toHaveAttribute('data-verdict', 'disturbed');
    expect(rows[2]).toHaveTextContent('failed');
  });

  it('says so when nothing needs a look', () => {
    render(<ReportSummary summary={{ ...summary, attention: [] }} />);
    expect(screen.getByRole('list', { name: 'Look at first' })).toHaveTextContent('Nothing: every verdict is valid');
  });
});
