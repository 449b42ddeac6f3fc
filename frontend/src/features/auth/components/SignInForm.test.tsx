import { act, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { admin } from '../../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../../test/render';
import { SignInForm } from './SignInForm';

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

function setup(answer: (req: Request) => Response | Promise<Response>, fakeTimers = false) {
  const fetchMock = vi.fn(async (req: Request) => answer(req));
  vi.stubGlobal('fetch', fetchMock);
  const onSignedIn = vi.fn();
  const user = userEvent.setup(fakeTimers ? { advanceTimers: (ms) => vi.advanceTimersByTime(ms) } : {});
  renderWithProviders(<SignInForm onSignedIn={onSignedIn} />, { route: '/signin' });
  return { fetchMock, onSignedIn, user };
}

async function signIn(user: ReturnType<typeof userEvent.setup>, name: string, password: string) {
  await user.type(screen.getByLabelText('Name'), name);
  await user.type(screen.getByLabelText('Password'), password);
  await user.click(screen.getByRole('button', { name: 'Sign in' }));
}

describe('SignInForm', () => {
  it('posts name and password and hands over who signed in', async () => {
    const { fetchMock, onSignedIn, user } = setup(() => jsonResponse(admin));
    expect(screen.getByLabelText('Name')).toHaveFocus();
    await signIn(user, ' ada ', 'correct horse battery');
    const req = fetchMock.mock.calls[0]?.[0] as Request;
    expect(req.method).toBe('POST');
    expect(new URL(req.url).pathname).toBe('/api/auth/login');
    expect(await req.json()).toEqual({ name: 'ada', password: 'correct horse battery' });
    expect(onSignedIn).toHaveBeenCalledWith(admin);
  });

  it('says a wrong password in words, clears the password, and stays', async () => {
    const { onSignedIn, user } = setup(() => jsonResponse({ detail: 'wrong name or password' }, 401));
    await signIn(user, 'ada', 'nope-nope-nope');
    expect(await screen.findByRole('alert')).toHaveTextContent('Wrong name or password.');
    expect(screen.getByLabelText('Password')).toHaveValue('');
    expect(screen.getByLabelText('Password')).toHaveAccessibleDescription('Wrong name or password.');
    expect(onSignedIn).not.toHaveBeenCalled();
  });

  it('asks for both fields before sending anything', async () => {
    const { fetchMock, user } = setup(() => jsonResponse(admin));
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Enter your name and password.');
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('shows the wait of a rate limit, counts it down, and blocks the button until then', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const { user } = setup(() => new Response(JSON.stringify({ detail: 'too many sign-in attempts' }), { status: 429, headers: { 'content-type': 'application/json', 'Retry-After': '65' } }), true);
    await signIn(user, 'ada', 'guess-guess-guess');
    expect(await screen.findByRole('alert')).toHaveTextContent('Too many failed sign-ins. Wait 1 min 5 s and try again.');
    expect(screen.getByRole('button', { name: 'Sign in' })).toBeDisabled();
    await act(async () => {
      vi.advanceTimersByTime(10_000);
    });
    expect(screen.getByRole('alert')).toHaveTextContent(/Wait (55|56) s and try again/);
    await act(async () => {
      vi.advanceTimersByTime(60_000);
    });
    expect(screen.getByRole('alert')).toHaveTextContent('You may try again now.');
    expect(screen.getByRole('button', { name: 'Sign in' })).toBeEnabled();
  });

  it('says when the server cannot be reached', async () => {
    const { user } = setup(() => Promise.reject(new TypeError('Failed to fetch')));
    await signIn(user, 'ada', 'whatever-long');
    expect(await screen.findByRole('alert')).toHaveTextContent('Cannot reach the server.');
  });
});
