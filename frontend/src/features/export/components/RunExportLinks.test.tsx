import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { RunExportLinks } from './RunExportLinks';

describe('RunExportLinks', () => {
  it('links to the server export in CSV and JSON, as downloads named after the run', () => {
    render(<RunExportLinks runId={12} />);
    const csv = screen.getByRole('link', { name: 'Download CSV' });
    expect(csv).toHaveAttribute('href', `${window.location.origin}/api/runs/12/export?format=csv`);
    expect(csv).toHaveAttribute('download', 'hostbench-run-12.csv');
    expect(screen.getByRole('link', { name: 'Download JSON' })).toHaveAttribute('href', expect.stringMatching(/\/api\/runs\/12\/export\?format=json$/));
  });
});
