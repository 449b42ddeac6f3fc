import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { HostPublic } from '../../../lib/api/types';
import { host } from '../../../test/fixtures';
import { HostsTable, Pager, readTableState } from './HostsTable';

describe('HostsTable', () => {
  it("shows each host's latest health-check verdict with its age, or that it was never checked", () => {
    const checked: HostPublic = {
      ...host,
      id: 2,
      name: 'slow',
      health: [{ suite: 'quick', verdict: 'FAIL', at: '2026-11-29T03:00:00Z', age_s: 7200, check_id: 9 }],
    };
    render(
      <HostsTable
        hosts={[checked, { ...host, id: 3, name: 'fresh', health: [] }]}
        state={readTableState(new URLSearchParams())}
        now={Date.parse('2026-11-29T05:00:00Z')}
        selected={null}
        onSort={() => undefined}
        onOpen={() => undefined}
      />,
    );
    expect(screen.getByRole('columnheader', { name: 'Health check' })).toBeInTheDocument();
    const slow = screen.getByRole('row', { name: /slow/ });
    const fresh = screen.getByRole('row', { name: /fresh/ });
    expect(within(slow).getByText('FAIL')).toBeInTheDocument();
    expect(within(slow).getByText(/2 h ago/)).toBeInTheDocument();
    expect(within(fresh).getByText('not checked')).toBeInTheDocument();
  });

  it("the pager names the rows shown: while the next page loads (the previous page's rows still shown) it says so", () => {
    const { rerender } = render(<Pager page={2} count={1002} shown={50} loading onPage={() => {}} />);
    expect(screen.getByRole('status')).toHaveTextContent('Loading page 2…');
    rerender(<Pager page={2} count={1002} shown={50} onPage={() => {}} />);
    expect(screen.getByRole('status')).toHaveTextContent('Hosts 51–100 of 1,002 · page 2 of 21');
  });
});
