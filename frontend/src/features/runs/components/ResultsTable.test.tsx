import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { resultRow } from '../../../test/fixtures';
import { ResultsTable } from './ResultsTable';

describe('ResultsTable', () => {
  it('shows mean ± stddev, min, max, n, unit, peak and the backend efficiency per thread count', () => {
    render(<ResultsTable result={{ unit: 'GFLOP/s', rows: [resultRow(), resultRow({ threads: 2, mean: 104.1, stddev: 1.25, min: 102.9, max: 105.3, efficiency: 0.879 })] }} />);
    const table = screen.getByRole('table', { name: /Thread count → mean ± stddev/ });
    const row1 = within(table).getByRole('row', { name: /^FP64 FLOPS 1 / });
    expect(row1).toHaveTextContent('52.35 ± 0.46');
    expect(row1).toHaveTextContent('51.90');
    expect(row1).toHaveTextContent('52.80');
    expect(row1).toHaveTextContent('GFLOP/s');
    expect(row1).toHaveTextContent('59.2 GFLOP/s');
    expect(row1).toHaveTextContent('88.4 %');
    expect(within(row1).getByText('valid')).toBeInTheDocument();
    const row2 = within(table).getByRole('row', { name: /^FP64 FLOPS 2 / });
    expect(row2).toHaveTextContent('104.1 ± 1.3');
    expect(row2).toHaveTextContent('87.9 %');
  });

  it('flags an invalid row with the backend reason instead of celebrating it', () => {
    render(
      <ResultsTable
        result={{
          unit: 'GFLOP/s',
          rows: [resultRow({ mean: 80, efficiency: 1.35, valid: false, invalid_reason: 'mean 80 GFLOP/s is above the theoretical peak 59.2 GFLOP/s' })],
        }}
      />,
    );
    const row = screen.getByRole('row', { name: /^FP64 FLOPS 1 / });
    expect(within(row).getByText('invalid')).toBeInTheDocument();
    expect(row).toHaveTextContent('above the theoretical peak');
    expect(row).toHaveTextContent('135 %');
  });

  it('shows — where the backend has no peak or efficiency', () => {
    render(<ResultsTable result={{ unit: 'GIOP/s', rows: [resultRow({ op: 'int32', unit: 'GIOP/s', peak: null, efficiency: null })] }} />);
    const row = screen.getByRole('row', { name: /^Integer ops/ });
    expect(within(row).getAllByText('—')).toHaveLength(2);
  });
});
