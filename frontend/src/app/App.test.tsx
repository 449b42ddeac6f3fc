// The signed-in shell as a person meets it: role-aware navigation and buttons, the sign-in page with
// the way back, sign-out, and a 401 from any call (the session ended) leading to sign-in.
import { screen, waitFor, within } from '@testing-library/react';
import { render } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { admin, host, operator, viewer } from '../test/fixtures';
import { jsonResponse } from '../test/render';
import type { Me } from '../lib/api/types';
import { setSignedInRole } from '../lib/api/errors';
import { App } from './App';

vi.mock('chart.js', async () => (await import('../test/chart-mock')).chartJsMock());

let signedIn: Me | null = null;

function serve(extra?: (req: Request, path: string) => Response | null) {
  const fetchMock = vi.fn(async (req: Request) => {
    const path = new URL(req.url).pathname;
    const answer = extra?.(req, path);
    if (answer) return answer;
    if (path === '/api/health') return jsonResponse({ status: 'ok', version: '0.1.0', database: 'ok', redis: 'ok' });
    if (path === '/api/auth/me') return signedIn ? jsonResponse(signedIn) : jsonResponse({ detail: 'not signed in' }, 401);
    if (path === '/api/auth/login') {
      const body = (await req.json()) as { name: string; password: string };
      if (body.password !== 'right password') return jsonResponse({ detail: 'wrong name or password' }, 401);
      signedIn = operator;
      return jsonResponse(operator);
    }
    if (path === '/api/auth/logout') {
      signedIn = null;
      return new Response(null, { status: 204 });
    }
    if (!signedIn) return jsonResponse({ detail: 'not signed in' }, 401);
    if (path === '/api/hosts') return jsonResponse({ data: [host], count: 1 });
    if (path === '/api/hosts/facets') return jsonResponse({ count: 1, statuses: { online: 1, offline: 0, revoked: 0 }, cpus: [], labels: [] });
    if (path === '/api/runs') return jsonResponse({ data: [], count: 0 });
    if (path === '/api/experiments') return jsonResponse({ data: [] });
    if (path === '/api/audit') return jsonResponse({ data: [], count: 0 });
    return jsonResponse({ detail: 'not found' }, 404);
  });
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

function open(path: string) {
  window.history.replaceState(null, '', path);
  return render(<App />);
}

const nav = () => screen.getByRole('navigation', { name: 'Main' });
const navLinks = () => within(nav()).getAllByRole('link').map((a) => a.textContent);

beforeEach(() => {
  document.cookie = 'hb_csrf=csrf-xyz; path=/';
});
afterEach(() => {
  vi.unstubAllGlobals();
  signedIn = null;
  setSignedInRole(null);
  document.cookie = 'hb_csrf=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/';
});

describe('role gating (from GET /api/auth/me)', () => {
  it('a viewer sees no New job, no Add host, no Users; their name and role are in the header', async () => {
    signedIn = viewer;
    serve();
    open('/');
    expect(await screen.findByRole('button', { name: 'Open bench-a' }, { timeout: 5000 })).toBeInTheDocument();
    expect(navLinks()).toEqual(['Hosts', 'Suites', 'Schedules', 'Hosts together', 'Health', 'History', 'Compare', 'Trends', 'Fleet view', 'Audit']);
    expect(screen.queryByRole('link', { name: 'New job' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /^Add host/ })).not.toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Account: vera (viewer)' })).toHaveAttribute('href', '/account');
    expect(screen.getByRole('button', { name: 'Sign out' })).toBeInTheDocument();
  });

  it('an operator gets New job but not Users or Add host', async () => {
    signedIn = operator;
    serve();
    open('/');
    expect(await screen.findByRole('button', { name: 'Open bench-a' }, { timeout: 5000 })).toBeInTheDocument();
    expect(navLinks()).toEqual(['Hosts', 'New job', 'Suites', 'Schedules', 'Hosts together', 'Health', 'History', 'Compare', 'Trends', 'Fleet view', 'Audit']);
    expect(screen.getAllByRole('link', { name: 'New job' })).toHaveLength(2);
    expect(screen.queryByRole('button', { name: /^Add host/ })).not.toBeInTheDocument();
  });

  it('an admin gets Users and Add host', async () => {
    signedIn = admin;
    serve();
    open('/');
    expect(await screen.findByRole('button', { name: 'Open bench-a' }, { timeout: 5000 })).toBeInTheDocument();
    expect(navLinks()).toEqual(['Hosts', 'New job', 'Suites', 'Schedules', 'Hosts together', 'Health', 'History', 'Compare', 'Trends', 'Fleet view', 'Audit', 'Users']);
    expect(screen.getByRole('button', { name: 'Add host' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Add hosts' })).toBeInTheDocument();
  });

  it('a viewer who opens /jobs/new or /users directly is told why, in words', async () => {
    signedIn = viewer;
    serve();
    open('/jobs/new');
    expect(await screen.findByRole('alert')).toHaveTextContent('Your role (viewer) cannot create jobs. This needs the operator role');
  });
});

describe('signing in and out', () => {
  it('not signed in: the sign-in page, a wrong password in words, then back where the person was', async () => {
    const fetchMock = serve();
    const user = userEvent.setup();
    open('/history?status=failed');
    expect(await screen.findByRole('heading', { name: 'Sign in', level: 1 })).toBeInTheDocument();
    expect(window.location.pathname).toBe('/signin');
    expect(new URLSearchParams(window.location.search).get('next')).toBe('/history?status=failed');

    await user.type(screen.getByLabelText('Name'), 'otto');
    await user.type(screen.getByLabelText('Password'), 'wrong password');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Wrong name or password.');

    await user.type(screen.getByLabelText('Password'), 'right password');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByRole('heading', { name: 'History', level: 1 })).toBeInTheDocument();
    expect(`${window.location.pathname}${window.location.search}`).toBe('/history?status=failed');
    const login = fetchMock.mock.calls.map(([r]) => r).find((r) => new URL(r.url).pathname === '/api/auth/login') as Request;
    expect(login.headers.get('X-CSRF-Token')).toBe('csrf-xyz');
  });

  it('sign-out ends the session and shows the sign-in page', async () => {
    signedIn = operator;
    const fetchMock = serve();
    const user = userEvent.setup();
    open('/history');
    await user.click(await screen.findByRole('button', { name: 'Sign out' }));
    expect(await screen.findByRole('heading', { name: 'Sign in', level: 1 })).toBeInTheDocument();
    expect(window.location.pathname).toBe('/signin');
    const out = fetchMock.mock.calls.map(([r]) => r).find((r) => new URL(r.url).pathname === '/api/auth/logout') as Request;
    expect(out.method).toBe('POST');
    expect(out.headers.get('X-CSRF-Token')).toBe('csrf-xyz');
    expect(screen.queryByRole('navigation', { name: 'Main' })).not.toBeInTheDocument();
  });

  it('a 401 from any call (the session ended) goes to sign-in, keeping the way back', async () => {
    signedIn = viewer;
    serve((_req, path) => (path === '/api/runs' ? jsonResponse({ detail: 'session expired' }, 401) : null));
    open('/history?experiment=cpu');
    // 5 s, not the default 1 s: the whole app renders first, and on a busy CI machine that alone took 2 s
    expect(await screen.findByRole('heading', { name: 'Sign in', level: 1 }, { timeout: 5000 })).toBeInTheDocument();
    await waitFor(() => expect(new URLSearchParams(window.location.search).get('next')).toBe('/history?experiment=cpu'));
  });
});
