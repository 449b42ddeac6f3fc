import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { resultRow, run } from '../../../test/fixtures';
import { ratioTable } from '../lib/compare';
import { RatioTable, formatRatio } from './RatioTable';

describe('RatioTable', () => {
  it('shows each run against the baseline with the figures, units and badges behind the ratio', () => {
    const a = run({ id: 1, result: { verdict: 'valid', flags: [], unit: 'GFLOP/s', rows: [resultRow({ mean: 50, stddev: 0.5 })] } });
    const b = run({ id: 2, result: { verdict: 'valid', flags: [], unit: 'GFLOP/s', rows: [resultRow({ mean: 60, stddev: 0.6, valid: false, invalid_reason: 'bad' })] } });
    render(<RatioTable table={ratioTable([a, b], 2)} runLabels={['#1 bench-a', '#2 bench-a']} />);
    const table = screen.getByRole('table', { name: /Ratio to baseline run #2/ });
    expect(within(table).getByRole('columnheader', { name: /#2 bench-a baseline/ })).toBeInTheDocument();
    const row = within(table).getByRole('row', { name: /FP64 FLOPS · 1 thread/ });
    const [first, second] = within(row).getAllByRole('cell');
    expect(first).toHaveTextContent('0.833×');
    expect(first).toHaveTextContent('50.00 ± 0.50 GFLOP/s');
    expect(second).toHaveTextContent('1.00× (baseline)');
    expect(second).toHaveTextContent('invalid');
    expect(second).toHaveClass('cell-invalid');
  });

  it('shows a disturbed or oversubscribed row by its verdict, never as plainly valid', () => {
    const flag = { kind: 'disturbed' as const, severity: 'caution' as const, text: 'CPU share 0.52 of 2 threads: other processes took the CPU' };
    const a = run({ id: 1, result: { verdict: 'valid', flags: [], unit: 'GFLOP/s', rows: [resultRow({ mean: 50, stddev: 0.5 })] } });
    const b = run({
      id: 2,
      result: { verdict: 'disturbed', flags: [flag], unit: 'GFLOP/s', rows: [resultRow({ mean: 30, stddev: 3, valid: true, verdict: 'disturbed', flags: [flag] })] },
    });
    render(<RatioTable table={ratioTable([a, b], 1)} runLabels={['#1 bench-a', '#2 bench-a']} />);
    const row = within(screen.getByRole('table')).getByRole('row', { name: /FP64 FLOPS · 1 thread/ });
    const [, second] = within(row).getAllByRole('cell');
    expect(second).toHaveTextContent('disturbed');
    expect(second).not.toHaveTextContent(/\bvalid\b/);
    expect(second && within(second).getByText('disturbed')).toHaveAttribute('title', flag.text);
  });

  it('formats ratios and their absence', () => {
    expect(formatRatio(1.2345)).toBe('1.23×');
    expect(formatRatio(0.9996)).toBe('1.00×');
    expect(formatRatio(12.34)).toBe('12.3×');
    expect(formatRatio(null)).toBe('—');
  });
});
