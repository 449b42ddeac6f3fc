import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { jsonResponse, renderWithProviders } from '../../../test/render';
import { MeshForm } from './MeshForm';

afterEach(() => vi.unstubAllGlobals());

const HOSTS = [
  { id: 1, name: 'a', online: true },
  { id: 2, name: 'b', online: true },
  { id: 3, name: 'c', online: false },
];

describe('MeshForm', () => {
  it('says the rounds ahead and posts the hosts, the mode, the server and the timing', async () => {
    const posted: unknown[] = [];
    vi.stubGlobal('fetch', vi.fn(async (req: Request) => {
      posted.push(await req.json());
      return jsonResponse({ id: 9 }, 201);
    }));
    const onStarted = vi.fn();
    const user = userEvent.setup();
    renderWithProviders(<MeshForm hosts={HOSTS} onStarted={onStarted} />);
    const start = screen.getByRole('button', { name: 'Test together' });
    expect(start).toBeDisabled();
    await user.click(screen.getByRole('checkbox', { name: /^a/ }));
    await user.click(screen.getByRole('checkbox', { name: /^b/ }));
    await user.click(screen.getByRole('checkbox', { name: /^c/ }));
    expect(screen.getByText(/3 links in 3 rounds/)).toBeInTheDocument();
    await user.click(screen.getByRole('radio', { name: 'All pairs, both ways' }));
    expect(screen.getByText(/6 links in 6 rounds/)).toBeInTheDocument();
    // many to one: the server is not one of the clients, and must be picked
    await user.click(screen.getByRole('radio', { name: 'Many to one' }));
    await user.click(screen.getByRole('checkbox', { name: /^c/ }));
    expect(start).toBeDisabled();
    await user.selectOptions(screen.getByLabelText('Server'), 'c');
    await user.click(screen.getByRole('checkbox', { name: 'TCP round trip (µs)' }));
    await user.type(screen.getByLabelText('Duration per repeat (s)'), '0.5');
    await user.click(start);
    await vi.waitFor(() => expect(onStarted).toHaveBeenCalled());
    expect(posted).toEqual([{ mode: 'many_to_one', host_ids: [1, 2], ops: ['tcp_stream'], params: { duration_s: 0.5 }, server_host_id: 3 }]);
  });

  it('in a larger fleet finds hosts by name or label and ticks every one shown (the host picker the health check uses)', async () => {
    const many = Array.from({ length: 8 }, (_, i) => ({ id: i + 1, name: `h${i + 1}`, online: true, labels: { rack: i < 3 ? 'b12' : 'c3' } }));
    const user = userEvent.setup();
    renderWithProviders(<MeshForm hosts={many} onStarted={vi.fn()} />);
    await user.type(screen.getByLabelText('Find hosts'), 'rack=b12');
    expect(screen.getAllByRole('checkbox', { name: /^h/ })).toHaveLength(3);
    await user.click(screen.getByRole('button', { name: 'Tick the 3 shown' }));
    expect(screen.getByRole('status')).toHaveTextContent('3 picked');
    expect(screen.getByText(/3 links in 3 rounds/)).toBeInTheDocument();
  });
});
