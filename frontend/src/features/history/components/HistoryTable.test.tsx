import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { resultRow, run } from '../../../test/fixtures';
import { renderWithProviders } from '../../../test/render';
import { HistoryTable, headline, runLabels } from './HistoryTable';

const hostsById = new Map([[1, { id: 1, name: 'bench-a', labels: { provider: 'aws', instanceType: 'c7i.large', region: null } }]]);

describe('HistoryTable', () => {
  it('lists runs with host labels, a headline result and a checkbox to compare', async () => {
    const onToggle = vi.fn();
    const runs = [run({ id: 9, status: 'succeeded', result: { verdict: 'valid', flags: [], unit: 'GFLOP/s', rows: [resultRow({ mean: 40 }), resultRow({ threads: 2, mean: 80 })] } }), run({ id: 8 })];
    renderWithProviders(<HistoryTable runs={runs} hostsById={hostsById} selected={new Set([8])} onToggle={onToggle} selectionFull={false} />);
    const row = screen.getByRole('row', { name: /#9/ });
    expect(row).toHaveTextContent('aws · c7i.large');
    expect(row).toHaveTextContent('best 80 GFLOP/s');
    expect(within(row).getByRole('link', { name: '#9' })).toHaveAttribute('href', '/runs/9');
    await userEvent.click(screen.getByRole('checkbox', { name: 'Select run #9 to compare' }));
    expect(onToggle).toHaveBeenCalledWith(9, true);
    expect(screen.getByRole('checkbox', { name: 'Select run #8 to compare' })).toBeChecked();
  });

  it('shows the labels a run was handed out under, the host\'s current ones before that', () => {
    const host = hostsById.get(1);
    expect(runLabels(run({ labels_snapshot: { provider: 'gcp', instance_type: 'c3-standard-4' } }), host)).toBe('gcp · c3-standard-4');
    expect(runLabels(run({ labels_snapshot: null }), host)).toBe('aws · c7i.large');
    expect(runLabels(run({ labels_snapshot: {} }), host)).toBe('');
    expect(runLabels(run({}), undefined)).toBe('');
  });

  it('disables unticked boxes when the comparison is full', () => {
    renderWithProviders(<HistoryTable runs={[run({ id: 9 }), run({ id: 8 })]} hostsById={hostsById} selected={new Set([8])} onToggle={vi.fn()} selectionFull />);
    expect(screen.getByRole('checkbox', { name: 'Select run #9 to compare' })).toBeDisabled();
    expect(screen.getByRole('checkbox', { name: 'Select run #8 to compare' })).toBeEnabled();
  });

  it('sums a trace run up by its mean and flags invalid rows', () => {
    expect(headline(run({ result: { verdict: 'valid', flags: [], unit: 'GFLOP/s', rows: [], trace: { n: 5, min: 1, mean: 2, max: 3, stddev: 0.5, throttle: null, stretches: [], flags: [] } } }))).toBe('mean 2 GFLOP/s');
    expect(headline(run({ result: { verdict: 'valid', flags: [], unit: 'GFLOP/s', rows: [resultRow({ valid: false })] } }))).toBe('best 52.35 GFLOP/s (invalid rows)');
    expect(headline(run({ result: { verdict: 'disturbed', flags: [], unit: 'GFLOP/s', rows: [resultRow({ verdict: 'disturbed' })] } }))).toBe('best 52.35 GFLOP/s (disturbed)');
    expect(headline(run())).toBe('—');
    // the backend's headline wins: the best valid row, or why there is none (never the disturbed row's figure)
    const rows = [resultRow({ mean: 30 }), resultRow({ mean: 99, verdict: 'disturbed' })];
    const h = { value: 30, unit: 'GFLOP/s', left_out: 1, text: 'best 30.00 GFLOP/s (1 row left out: not valid)' };
    expect(headline(run({ result: { verdict: 'disturbed', flags: [], unit: 'GFLOP/s', rows, headline: h } }))).toBe('best 30 GFLOP/s (1 row left out: not valid)');
    const none = { value: null, unit: 'GFLOP/s', text: 'no valid row yet; 2 disturbed' };
    expect(headline(run({ result: { verdict: 'disturbed', flags: [], unit: 'GFLOP/s', rows, headline: none } }))).toBe('no valid row yet; 2 disturbed');
  });
});
