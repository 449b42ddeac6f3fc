import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { AuditTable } from './AuditTable';

describe('AuditTable', () => {
  it('lists who did what, to what, with the detail on one line', () => {
    render(
      <AuditTable
        events={[
          { id: 2, at: '2026-11-01T10:05:00Z', user_name: 'ada', action: 'host.delete', target: 'host 4 (lab-7)', detail: { history: 'keep' } },
          { id: 1, at: '2026-11-01T10:00:00Z', user_name: 'otto', action: 'run.cancel', target: 'run 12', detail: {} },
        ]}
      />,
    );
    const rows = screen.getAllByRole('row').slice(1);
    expect(rows).toHaveLength(2);
    expect(within(rows[0] as HTMLElement).getAllByRole('cell').map((c) => c.textContent)).toEqual([
      expect.any(String),
      'ada',
      'host.delete (host delete)',
      'host 4 (lab-7)',
      'history=keep',
    ]);
    expect(rows[1]).toHaveTextContent('otto');
    expect(rows[1]).toHaveTextContent('run 12');
  });
});
