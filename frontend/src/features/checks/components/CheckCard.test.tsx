import { render, screen, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { describe, expect, it } from 'vitest';
import type { Check } from '../api/checks';
import { figureText } from '../api/checks';
import { CheckCard } from './CheckCard';

const band = { source: 'learned' as const, kind: 'cpu=AMD EPYC/2', lower: 80.8, upper: null, target: 101, unit: 'GFLOP/s', note: '', of_peak: false,
  siblings: [{ host_id: 1, host_name: 'good1', run_id: 7, value: 101, at: '2026-11-29T03:00:00Z' }] };

const check: Check = {
  id: 3, suite: 'quick', title: 'Quick health check', suite_run_id: 9, suite_status: 'succeeded', label: 'rack=b12',
  kind_by: 'cpu', drain_on_fail: false, created_by: 'ada', created_at: '2026-11-29T03:00:00Z',
  judged_at: '2026-11-29T03:05:00Z',
  status: 'judged', counts: { FAIL: 1, PASS: 1 },
  hosts: [
    { host_id: 2, host_name: 'slow', verdict: 'FAIL', reason: '1 figure(s) outside their band', counts: { fail: 1, not_judged: 1 },
      in_turn: 'measured in turn: same machine as good1 (the same running kernel (boot id)); 2nd of 2',
      figures: [{ status: 'fail', run_id: 12, figure: { experiment: 'cpu', op: 'fp64', threads: 1, block_bytes: null },
        value: 45, unit: 'GFLOP/s', band, distance: -0.443, reason: 'learned' },
        { status: 'not_judged', run_id: 14, figure: { experiment: 'disk', op: 'seq_write', threads: 1, block_bytes: 4096 },
          value: 1.3, unit: 'MB/s', reason: 'CPU-bound: throttled by the host\'s CPU quota 45% of the phase (repeat 1, above 10%); not judged as a disk figure' }] },
    { host_id: 1, host_name: 'good1', verdict: 'PASS', reason: '2 figure(s) inside their band', counts: { pass: 2 }, figures: [] },
    { host_id: 4, host_name: 'busy', verdict: 'DISTURBED', reason: '1 measurement(s) not valid', counts: { disturbed: 1 },
      figures: [{ status: 'disturbed', run_id: 13, figure: { experiment: 'cpu', op: 'fp64', threads: 1, block_bytes: null },
        value: 30, unit: 'GFLOP/s', reason: 'disturbed: CPU share 0.14 in repeat 1 (below 0.90)' }] },
  ],
};

describe('CheckCard', () => {
  it('shows each host with its verdict, and a failure with its value, band, distance, basis and run', () => {
    render(
      <MemoryRouter>
        <CheckCard check={check} />
      </MemoryRouter>,
    );
    const rows = screen.getAllByRole('row').slice(1);
    expect(rows).toHaveLength(3);
    // a disturbed figure was not judged: it says why, not "no band"
    expect(rows[2]).toHaveTextContent('cpu · fp64 · 1 thread: 30 GFLOP/s — disturbed: CPU share 0.14 in repeat 1 (below 0.90); run 13');
    const first = rows[0] as HTMLElement;
    expect(within(first).getByText('FAIL')).toBeInTheDocument();
    expect(first).toHaveTextContent('cpu · fp64 · 1 thread: 45 GFLOP/s vs 80.8 … +∞ GFLOP/s (-44.3 %)');
    expect(first).toHaveTextContent('learned for cpu=AMD EPYC/2 from good1');
    expect(within(first).getByRole('link', { name: 'run 12' })).toHaveAttribute('href', '/runs/12');
    // a disk figure the host's CPU quota throttled: listed with why, not judged; and the host measured in turn
    expect(first).toHaveTextContent("disk · seq_write · 1 thread · 4 KiB: 1.3 MB/s — CPU-bound: throttled by the host's CPU quota 45% of the phase (repeat 1, above 10%); not judged as a disk figure; run 14");
    expect(first).toHaveTextContent('measured in turn: same machine as good1 (the same running kernel (boot id)); 2nd of 2');
    // the host's cell names the host alone (the browser suite finds a row by it)
    expect(within(first).getByRole('cell', { name: 'slow' })).toBeInTheDocument(); // a string name matches the whole name
    expect(rows[1]).toHaveTextContent('PASS');
    expect(screen.getByRole('link', { name: 'report (HTML)' })).toHaveAttribute('href', '/api/checks/3/report');
    expect(document.body).not.toHaveTextContent('2026-11-29T03:05'); // a date in words, not the raw ISO stamp
    expect(figureText({ experiment: 'disk', op: 'rand_read', threads: 1, block_bytes: 4096 })).toBe('disk · rand_read · 1 thread · 4 KiB');
  });
});
