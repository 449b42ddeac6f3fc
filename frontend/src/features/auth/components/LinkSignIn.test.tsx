import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { StrictMode } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { jsonResponse, renderWithProviders } from '../../../test/render';
import { LINK_SIGNIN_KEY, LinkSignIn, tokenFromHash } from './LinkSignIn';

afterEach(() => {
  vi.unstubAllGlobals();
  sessionStorage.clear();
});

const newcomer = { id: 9, name: 'nia', role: 'operator' as const, has_password: false };

describe('LinkSignIn (one-time link)', () => {
  it('reads the token from the fragment', () => {
    expect(tokenFromHash('#hblink_abc')).toBe('hblink_abc');
    expect(tokenFromHash('#token=hblink_abc')).toBe('hblink_abc');
    expect(tokenFromHash('')).toBeNull();
    expect(tokenFromHash('#')).toBeNull();
  });

  it('trades the token once (even under StrictMode), then asks for a password with no current one', async () => {
    const fetchMock = vi.fn(async (req: Request) => (new URL(req.url).pathname === '/api/auth/link' ? jsonResponse(newcomer) : new Response(null, { status: 204 })));
    vi.stubGlobal('fetch', fetchMock);
    const onDone = vi.fn();
    const user = userEvent.setup();
    renderWithProviders(
      <StrictMode>
        <LinkSignIn token="hblink_secret" onDone={onDone} />
      </StrictMode>,
    );
    expect(await screen.findByRole('heading', { name: 'Signed in as nia (operator)' })).toBeInTheDocument();
    const linkCalls = fetchMock.mock.calls.filter(([r]) => new URL(r.url).pathname === '/api/auth/link');
    expect(linkCalls).toHaveLength(1);
    expect(await (linkCalls[0]?.[0] as Request).json()).toEqual({ token: 'hblink_secret' });

    expect(screen.queryByLabelText('Current password')).not.toBeInTheDocument();
    await user.type(screen.getByLabelText('New password'), 'short');
    await user.type(screen.getByLabelText('Repeat the new password'), 'short');
    await user.click(screen.getByRole('button', { name: 'Set password and continue' }));
    expect(screen.getByLabelText('New password')).toHaveAccessibleDescription(/At least 10 characters/);
    expect(onDone).not.toHaveBeenCalled();

    await user.clear(screen.getByLabelText('New password'));
    await user.type(screen.getByLabelText('New password'), 'a long new password');
    await user.clear(screen.getByLabelText('Repeat the new password'));
    await user.type(screen.getByLabelText('Repeat the new password'), 'a long new password');
    await user.click(screen.getByRole('button', { name: 'Set password and continue' }));
    const put = fetchMock.mock.calls.map(([r]) => r).find((r) => r.method === 'PUT') as Request;
    expect(new URL(put.url).pathname).toBe('/api/auth/password');
    expect(await put.json()).toEqual({ current_password: null, new_password: 'a long new password' });
    expect(onDone).toHaveBeenCalledWith(newcomer);
  });

  it('says what to do with a used or expired link', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => jsonResponse({ detail: 'sign-in link used or expired' }, 401)));
    renderWithProviders(<LinkSignIn token="hblink_used" onDone={vi.fn()} />);
    expect(await screen.findByRole('alert')).toHaveTextContent(/cannot be used.*sign-in link used or expired.*Ask an admin for a new one/);
  });

  it('says so when the address holds no token', () => {
    const fetchMock = vi.fn();
    vi.stubGlobal('fetch', fetchMock);
    renderWithProviders(<LinkSignIn token={null} onDone={vi.fn()} />);
    expect(screen.getByRole('alert')).toHaveTextContent('This address holds no sign-in token.');
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('after a reload (the token gone from the address) keeps the password form while the session lasts', async () => {
    const fetchMock = vi.fn(async (req: Request) => {
      const path = new URL(req.url).pathname;
      if (path === '/api/auth/link') return jsonResponse(newcomer);
      if (path === '/api/auth/me') return jsonResponse(newcomer);
      return new Response(null, { status: 204 });
    });
    vi.stubGlobal('fetch', fetchMock);
    const first = renderWithProviders(<LinkSignIn token="hblink_secret" onDone={vi.fn()} />);
    expect(await screen.findByRole('heading', { name: 'Signed in as nia (operator)' })).toBeInTheDocument();
    first.unmount();

    // the reload: no token in the address, the session cookie still good
    const onDone = vi.fn();
    const user = userEvent.setup();
    renderWithProviders(<LinkSignIn token={null} onDone={onDone} />);
    expect(await screen.findByRole('heading', { name: 'Signed in as nia (operator)' })).toBeInTheDocument();
    expect(screen.getByLabelText('New password')).toBeInTheDocument();
    expect(fetchMock.mock.calls.filter(([r]) => new URL(r.url).pathname === '/api/auth/link')).toHaveLength(1);
    await user.click(screen.getByRole('button', { name: 'Later: go to the dashboard' }));
    expect(onDone).toHaveBeenCalledWith(newcomer);
    expect(sessionStorage.getItem(LINK_SIGNIN_KEY)).toBeNull();
  });

  it('after a reload whose session has ended, says the address holds no token', async () => {
    sessionStorage.setItem(LINK_SIGNIN_KEY, '9');
    vi.stubGlobal('fetch', vi.fn(async () => jsonResponse({ detail: 'not signed in' }, 401)));
    renderWithProviders(<LinkSignIn token={null} onDone={vi.fn()} />);
    expect(await screen.findByRole('alert')).toHaveTextContent('This address holds no sign-in token.');
  });
});
