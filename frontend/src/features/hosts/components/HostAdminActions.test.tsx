import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { host } from '../../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../../test/render';
import { HostAdminActions } from './HostAdminActions';

afterEach(() => vi.unstubAllGlobals());

function serve() {
  const fetchMock = vi.fn(async (req: Request) => (req.method === 'DELETE' ? new Response(null, { status: 204 }) : jsonResponse({ ...host, revoked: true }, 200)));
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

describe('HostAdminActions', () => {
  it('deletes a host with its history only when that is chosen, after a confirm', async () => {
    const fetchMock = serve();
    const user = userEvent.setup();
    renderWithProviders(<HostAdminActions host={host} />);
    await user.click(screen.getByRole('button', { name: 'Delete bench-a' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete bench-a?' });
    expect(within(dialog).getByRole('radio', { name: /Keep history/ })).toBeChecked();
    await user.click(within(dialog).getByRole('radio', { name: /Delete history/ }));
    await user.click(within(dialog).getByRole('button', { name: 'Delete host and history' }));
    const req = fetchMock.mock.calls[0]?.[0] as Request;
    expect(req.method).toBe('DELETE');
    const url = new URL(req.url);
    expect(url.pathname).toBe('/api/hosts/1');
    expect(url.searchParams.get('history')).toBe('delete');
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
  });

  it('keeps history by default; Cancel sends nothing', async () => {
    const fetchMock = serve();
    const user = userEvent.setup();
    renderWithProviders(<HostAdminActions host={host} />);
    await user.click(screen.getByRole('button', { name: 'Delete bench-a' }));
    await user.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Cancel' }));
    expect(fetchMock).not.toHaveBeenCalled();
    await user.click(screen.getByRole('button', { name: 'Delete bench-a' }));
    await user.click(screen.getByRole('button', { name: 'Delete host, keep history' }));
    expect(new URL((fetchMock.mock.calls[0]?.[0] as Request).url).searchParams.get('history')).toBe('keep');
  });

  it('revokes and rotates after saying what happens', async () => {
    const fetchMock = serve();
    const user = userEvent.setup();
    renderWithProviders(<HostAdminActions host={host} />);
    await user.click(screen.getByRole('button', { name: 'Revoke bench-a' }));
    expect(screen.getByRole('dialog', { name: 'Revoke bench-a?' })).toHaveTextContent('its next call gets 401 and it stops');
    await user.click(screen.getByRole('button', { name: 'Revoke runner' }));
    expect(new URL((fetchMock.mock.calls[0]?.[0] as Request).url).pathname).toBe('/api/hosts/1/revoke');
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());

    await user.click(screen.getByRole('button', { name: 'Rotate credential of bench-a' }));
    await user.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Rotate credential' }));
    expect(new URL((fetchMock.mock.calls[1]?.[0] as Request).url).pathname).toBe('/api/hosts/1/rotate-credential');
  });

  it('offers only Delete for a revoked host', () => {
    renderWithProviders(<HostAdminActions host={{ ...host, revoked: true }} />);
    const group = screen.getByRole('group', { name: 'Admin actions for bench-a' });
    expect(within(group).getAllByRole('button').map((b) => b.textContent)).toEqual(['Delete']);
  });
});
