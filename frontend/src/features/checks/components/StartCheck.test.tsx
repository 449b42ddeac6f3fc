import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { HostOption } from '../../../components/HostPicker';
import { StartCheck } from './StartCheck';

const HOSTS: HostOption[] = [
  { id: 1, name: 'a1', online: true, labels: { rack: 'b12' } },
  { id: 2, name: 'a2', online: true, labels: { rack: 'b12' } },
  { id: 3, name: 'c1', online: false, labels: { rack: 'c3' } },
];
const SUITES = [
  { id: 'quick', title: 'Quick health check' },
  { id: 'saved-4', title: 'My suite' },
];

function setup(hosts = HOSTS) {
  const onStart = vi.fn();
  render(<StartCheck hosts={hosts} suites={SUITES} pending={false} error={null} onStart={onStart} />);
  return onStart;
}

describe('StartCheck', () => {
  it('starts a check on the hosts a person ticks, with the suite and the peer chosen', () => {
    const onStart = setup();
    const run = screen.getByRole('button', { name: 'Run check' });
    expect(run).toBeDisabled(); // nothing picked yet
    fireEvent.click(screen.getByRole('checkbox', { name: /a1/ }));
    fireEvent.click(screen.getByRole('checkbox', { name: /c1/ }));
    expect(screen.getByRole('status')).toHaveTextContent('2 picked');
    fireEvent.change(screen.getByLabelText('Suite'), { target: { value: 'saved-4' } });
    const peer = screen.getByLabelText(/Peer/);
    expect([...(peer as HTMLSelectElement).options].map((o) => o.text)).toEqual(['none', 'a2']); // the picked are not offered
    fireEvent.change(peer, { target: { value: '2' } });
    expect(screen.getByRole('checkbox', { name: /a2/ })).toBeDisabled();
    const kind = screen.getByLabelText('Learn bands from hosts of the same');
    expect([...(kind as HTMLSelectElement).options].map((o) => o.value)).toEqual(['cpu', 'rack']);
    fireEvent.change(kind, { target: { value: 'rack' } });
    fireEvent.click(run);
    expect(onStart).toHaveBeenCalledWith({ suite: 'saved-4', host_ids: [1, 3], kind_by: 'rack', drain_on_fail: false, peer_host_id: 2 });
  });

  it('or on every host with a label', () => {
    const onStart = setup();
    fireEvent.click(screen.getByRole('radio', { name: 'Every live host with a label' }));
    expect(screen.queryByRole('checkbox')).toBeNull();
    fireEvent.change(screen.getByLabelText('Label'), { target: { value: ' rack=b12 ' } });
    fireEvent.click(screen.getByRole('button', { name: 'Run check' }));
    expect(onStart).toHaveBeenCalledWith({ suite: 'quick', label: 'rack=b12', kind_by: 'cpu', drain_on_fail: false });
  });

  it('finds hosts in a larger fleet and ticks every one shown at once', () => {
    const many = Array.from({ length: 8 }, (_, i) => ({ id: i + 1, name: `h${i + 1}`, online: true, labels: { rack: i < 3 ? 'b12' : 'c3' } }));
    const onStart = setup(many);
    fireEvent.change(screen.getByLabelText('Find hosts'), { target: { value: 'rack=b12' } });
    expect(screen.getAllByRole('checkbox')).toHaveLength(3);
    fireEvent.click(screen.getByRole('button', { name: 'Tick the 3 shown' }));
    fireEvent.click(screen.getByRole('button', { name: 'Run check' }));
    expect(onStart).toHaveBeenCalledWith(expect.objectContaining({ host_ids: [1, 2, 3] }));
  });
});
