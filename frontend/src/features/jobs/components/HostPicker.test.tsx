import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { HostOption } from '../lib/job-form';
import { HostPicker, PICKER_SHOWN_MAX, labelChoices, matchHosts } from './HostPicker';

// A fleet: 300 hosts over 10 racks, web and db roles.
const FLEET: HostOption[] = Array.from({ length: 300 }, (_, i) => ({
  id: i + 1,
  name: `node-${String(i).padStart(3, '0')}`,
  hostname: `node-${i}.dc1`,
  online: true,
  labels: { rack: `r${i % 10}`, role: i % 3 === 0 ? 'db' : 'web' },
}));

function picker(hostIds: number[] = [], pair = false) {
  const onToggle = vi.fn();
  render(<HostPicker hosts={FLEET} hostIds={hostIds} pair={pair} error={null} onToggle={onToggle} onSwap={() => {}} />);
  return onToggle;
}

describe('HostPicker at fleet size', () => {
  it('lists at most the first hundred, and says how many match', () => {
    picker();
    expect(screen.getAllByRole('checkbox')).toHaveLength(PICKER_SHOWN_MAX);
    expect(screen.getByRole('status')).toHaveTextContent('0 ticked · 300 of 300 match; the first 100 are listed: narrow the search for the rest');
  });

  it('finds hosts by name and by label, and ticks every host with a label at once', () => {
    const onToggle = picker([1]);
    fireEvent.change(screen.getByLabelText('Find hosts'), { target: { value: 'node-29' } });
    // node-029 and node-290 … node-299, and the ticked node-000 stays listed
    expect(screen.getAllByRole('checkbox').map((c) => c.parentElement?.textContent?.slice(0, 8))).toEqual([
      'node-000', 'node-029', ...Array.from({ length: 10 }, (_, i) => `node-29${i}`),
    ]);
    fireEvent.change(screen.getByLabelText('Find hosts'), { target: { value: '' } });
    fireEvent.change(screen.getByLabelText('With label'), { target: { value: 'rack=r4' } });
    expect(screen.getByRole('status')).toHaveTextContent('1 ticked · 30 of 300 match');
    fireEvent.click(screen.getByRole('button', { name: 'Tick the 30 matching' }));
    expect(onToggle.mock.calls.map(([id]) => id)).toEqual(FLEET.filter((h) => h.labels?.rack === 'r4').map((h) => h.id));
    expect(within(screen.getByLabelText('With label')).getByRole('option', { name: 'role: db (100)' })).toBeInTheDocument();
  });

  it('a two-host experiment is picked one by one', () => {
    picker([], true);
    fireEvent.change(screen.getByLabelText('With label'), { target: { value: 'rack=r1' } });
    expect(screen.queryByRole('button', { name: /^Tick the/ })).not.toBeInTheDocument();
  });

  it('matches any case, on the host name and on key=value', () => {
    expect(matchHosts(FLEET, 'NODE-7.DC1', '').map((h) => h.id)).toEqual([8]);
    expect(matchHosts(FLEET, 'role=db', 'rack=r0')).toHaveLength(10);
    expect(labelChoices(FLEET.slice(0, 3))).toEqual([
      { value: 'rack=r0', count: 1 }, { value: 'rack=r1', count: 1 }, { value: 'rack=r2', count: 1 },
      { value: 'role=db', count: 1 }, { value: 'role=web', count: 2 },
    ]);
  });
});
