import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { resultRow } from '../../../test/fixtures';
import { ResultsView } from './ResultsView';

describe('ResultsView', () => {
  it('lists the rows the kernel refused on this host, each with its reason, beside the rows that ran', () => {
    const reason = 'needs 8.5 GiB, more than 90 % of the 5.2 GiB this host has available; at 8 threads up to 512 MiB per thread fits';
    const result = {
      unit: 'GFLOP/s', verdict: 'valid' as const, flags: [], rows: [resultRow()],
      refused: [{ op: 'latency', threads: 8, block_bytes: 1073741824, reason }],
    };
    render(<ResultsView result={result} theme="light" fileBase="run-1" charts={false} />);
    const note = screen.getByRole('note', { name: 'Rows not run' });
    expect(note).toHaveTextContent('Not run on this host (1 row)');
    expect(note).toHaveTextContent('1 GiB, 8 threads');
    expect(note).toHaveTextContent(reason);
  });

  it('says nothing of refused rows when every row ran', () => {
    render(<ResultsView result={{ unit: 'GFLOP/s', verdict: 'valid', flags: [], rows: [resultRow()] }} theme="light" fileBase="run-1" charts={false} />);
    expect(screen.queryByRole('note', { name: 'Rows not run' })).toBeNull();
  });
});
