import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { renderWithProviders } from '../../../test/render';
import { ImportedRowsTable, importedSummary, type ImportedRow } from './ImportedRowsTable';

const row = (over: Partial<ImportedRow> = {}): ImportedRow => ({
  id: 3, host_id: 1, host_name: 'bench-a', tool: 'fio', format: 'json', file_name: 'seqread.json',
  metrics: [{ name: 'bw', value: 1355.9, unit: 'MB/s' }], imported: true, imported_by: 'op',
  imported_at: '2026-11-26T03:00:00Z', ...over,
});

describe('ImportedRowsTable', () => {
  it('marks each row imported, with tool, file, figure and unit, and who imported it', () => {
    renderWithProviders(<ImportedRowsTable rows={[row()]} />);
    const r = screen.getByRole('row', { name: /#3/ });
    expect(r).toHaveTextContent('imported');
    expect(r).toHaveTextContent('fio');
    expect(r).toHaveTextContent('seqread.json');
    expect(r).toHaveTextContent('MB/s');
    expect(r).toHaveTextContent('by op');
  });

  it('renders nothing without rows; summarises many metrics', () => {
    const { container } = renderWithProviders(<ImportedRowsTable rows={[]} />);
    expect(container).toBeEmptyDOMElement();
    const many = row({ metrics: [1, 2, 3, 4].map((i) => ({ name: `m${i}`, value: i, unit: 'ms' })) });
    expect(importedSummary(many)).toMatch(/^m1 .* \(\+1 more\)$/);
  });
});
