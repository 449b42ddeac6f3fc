import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import { ScalingTable, type StrongScaling } from './ScalingTable';

const units = { elapsed_s: 's', elapsed_min_s: 's', speedup: '×', efficiency: '' };

describe('ScalingTable', () => {
  it('shows elapsed time, speedup T1/Tn and efficiency T1/(n·Tn) with their units, as the API gives them', () => {
    const scaling: StrongScaling = {
      op: 'fp64',
      work: 2000000000,
      baseline_threads: 1,
      units,
      points: [
        { threads: 1, elapsed_s: 7.3, elapsed_min_s: 7.3, speedup: 1, efficiency: 1, valid: true },
        { threads: 2, elapsed_s: 3.8, elapsed_min_s: 3.7, speedup: 1.921, efficiency: 0.9605, valid: true },
        { threads: 4, elapsed_s: 3.9, elapsed_min_s: 1.9, speedup: 1.872, efficiency: 0.468, valid: false },
      ],
    };
    render(<ScalingTable scaling={scaling} />);
    const table = screen.getByRole('table', { name: /FP64 FLOPS: strong scaling, 2,000,000,000 units of work/ });
    expect(within(table).getByRole('columnheader', { name: 'Elapsed, slowest thread (s)' })).toBeInTheDocument();
    expect(within(table).getByRole('columnheader', { name: 'Speedup T1/Tn (×)' })).toBeInTheDocument();
    expect(within(table).getByRole('columnheader', { name: 'Efficiency T1/(n·Tn)' })).toBeInTheDocument();
    const two = within(table).getByRole('row', { name: /^2 / });
    expect(two).toHaveTextContent('3.8');
    expect(two).toHaveTextContent('1.92');
    expect(two).toHaveTextContent('96.1 %');
    const four = within(table).getByRole('row', { name: /^4 / });
    expect(four).toHaveAttribute('data-valid', 'false');
    expect(four).toHaveTextContent('not valid');
  });

  it('names the baseline when the run has no 1-thread row', () => {
    render(
      <ScalingTable
        scaling={{ op: 'int32', work: 1000, baseline_threads: 2, units, points: [{ threads: 2, elapsed_s: 1, elapsed_min_s: 1, speedup: 1, efficiency: 1, valid: true }] }}
      />,
    );
    expect(screen.getByRole('table', { name: /relative to 2 threads/ })).toBeInTheDocument();
    expect(screen.getByRole('columnheader', { name: 'Speedup T2/Tn (×)' })).toBeInTheDocument();
    expect(screen.getByRole('columnheader', { name: 'Efficiency 2·T2/(n·Tn)' })).toBeInTheDocument();
  });
});
