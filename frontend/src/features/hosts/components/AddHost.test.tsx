import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registrationToken } from '../../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../../test/render';
import { AddHost, loopbackUrl } from './AddHost';

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('AddHost', () => {
  it('makes a single-use token and shows its expiry, the install command with a copy button, and the container alternative', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true, now: Date.parse('2026-11-01T10:00:00Z') });
    const fetchMock = vi.fn(async (_req: Request) => jsonResponse(registrationToken, 201));
    vi.stubGlobal('fetch', fetchMock);
    const user = userEvent.setup({ advanceTimers: (ms) => vi.advanceTimersByTime(ms) });
    renderWithProviders(<AddHost />);
    await user.click(screen.getByRole('button', { name: 'Add host' }));
    const dialog = screen.getByRole('dialog', { name: 'Add a host' });
    const req = fetchMock.mock.calls[0]?.[0] as Request;
    expect(req.method).toBe('POST');
    expect(new URL(req.url).pathname).toBe('/api/hosts/registration-tokens');
    expect(await req.json()).toEqual({ ttl_s: 900, uses: 1 });

    const install = await within(dialog).findByTestId('install-command');
    expect(install).toHaveTextContent(registrationToken.install_command);
    expect(install).toHaveAccessibleName('Install command');
    expect(within(dialog).getByRole('note')).toHaveTextContent(/registers one host and expires at .* \(in 15 min\)/);
    expect(within(dialog).getByTestId('container-command')).toHaveTextContent(registrationToken.container_command);
    await user.click(within(dialog).getByRole('button', { name: 'Copy install command' }));
    expect(await navigator.clipboard.readText()).toBe(registrationToken.install_command);
    expect(within(dialog).getAllByRole('status').some((s) => s.textContent === 'Install command copied')).toBe(true);

    // A longer validity makes a new token.
    await user.selectOptions(within(dialog).getByLabelText('Token valid for'), '1 hour');
    await waitFor(() => expect(fetchMock).toHaveBeenCalledTimes(2));
    expect(await (fetchMock.mock.calls[1]?.[0] as Request).json()).toEqual({ ttl_s: 3600, uses: 1 });

    await user.click(within(dialog).getByRole('button', { name: 'Done' }));
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Add host' })).toHaveFocus();
  });

  it('shows a refusal in words (a 403 names the role)', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => jsonResponse({ detail: 'this needs the admin role; otto is operator' }, 403)));
    const user = userEvent.setup();
    renderWithProviders(<AddHost />, { me: { id: 2, name: 'otto', role: 'operator', has_password: true } });
    await user.click(screen.getByRole('button', { name: 'Add host' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Could not make a registration token: Your role (operator) cannot do this: this needs the admin role; otto is operator');
  });

  it('says, beside a loopback address, that no other machine reaches it and how to change that', async () => {
    const local = { ...registrationToken, install_command: registrationToken.install_command.replaceAll('10.0.0.1', '127.0.0.1') };
    vi.stubGlobal('fetch', vi.fn(async () => jsonResponse(local, 201)));
    const user = userEvent.setup();
    renderWithProviders(<AddHost />);
    await user.click(screen.getByRole('button', { name: 'Add host' }));
    const warning = await screen.findByRole('alert', { name: 'Only this machine can reach this address' });
    expect(warning).toHaveTextContent('Only this machine can reach http://127.0.0.1:8000.');
    expect(warning).toHaveTextContent('HOSTBENCH_BIND=0.0.0.0');
    expect(warning).toHaveTextContent('HOSTBENCH_PUBLIC_URL');
  });

  it('warns for loopback addresses only', () => {
    expect(loopbackUrl('curl http://127.0.0.1:8001/x')).toBe('http://127.0.0.1:8001');
    expect(loopbackUrl('curl https://localhost/x')).toBe('https://localhost');
    expect(loopbackUrl('curl http://[::1]:8001/x')).toBe('http://[::1]:8001');
    expect(loopbackUrl(registrationToken.install_command)).toBeNull();
    expect(loopbackUrl('curl https://bench.example.org/x')).toBeNull();
  });
});
