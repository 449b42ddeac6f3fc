import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { jsonResponse } from '../../test/render';
import { api, onUnauthorized } from './client';
import { ApiError, setSignedInRole, unwrap } from './errors';

function clearCookies() {
  for (const c of document.cookie.split(';')) {
    const name = c.split('=')[0]?.trim();
    if (name) document.cookie = `${name}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/`;
  }
}

beforeEach(() => {
  clearCookies();
  document.cookie = 'hb_csrf=csrf-value-1; path=/';
});
afterEach(() => {
  vi.unstubAllGlobals();
  clearCookies();
  setSignedInRole(null);
});

describe('the one API client', () => {
  it('sends X-CSRF-Token (from the hb_csrf cookie) on every state-changing method, never on GET', async () => {
    const fetchMock = vi.fn(async (_req: Request) => jsonResponse({}));
    vi.stubGlobal('fetch', fetchMock);
    await api.GET('/api/hosts');
    await api.POST('/api/runs/{run_id}/cancel', { params: { path: { run_id: 1 } } });
    await api.PATCH('/api/hosts/{host_id}/labels', { params: { path: { host_id: 1 } }, body: {} });
    await api.PUT('/api/auth/password', { body: { current_password: null, new_password: 'x'.repeat(10) } });
    await api.DELETE('/api/me/tokens/{token_id}', { params: { path: { token_id: 4 } } });
    const sent = fetchMock.mock.calls.map(([r]) => [r.method, r.headers.get('X-CSRF-Token')]);
    expect(sent).toEqual([
      ['GET', null],
      ['POST', 'csrf-value-1'],
      ['PATCH', 'csrf-value-1'],
      ['PUT', 'csrf-value-1'],
      ['DELETE', 'csrf-value-1'],
    ]);
  });

  it('a 401 from any call tells the app (to go to sign-in); the sign-in calls and /me answer their callers', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => jsonResponse({ detail: 'not signed in' }, 401)));
    const listener = vi.fn();
    const off = onUnauthorized(listener);
    await expect(unwrap(api.GET('/api/hosts'))).rejects.toMatchObject({ status: 401 });
    expect(listener).toHaveBeenCalledTimes(1);
    await expect(unwrap(api.POST('/api/auth/login', { body: { name: 'a', password: 'b' } }))).rejects.toMatchObject({ status: 401 });
    await expect(unwrap(api.GET('/api/auth/me'))).rejects.toMatchObject({ status: 401 });
    expect(listener).toHaveBeenCalledTimes(1);
    off();
    await expect(unwrap(api.GET('/api/hosts'))).rejects.toBeInstanceOf(ApiError);
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('a 403 says the role fell short, in words, with the server’s reason', async () => {
    setSignedInRole('viewer');
    vi.stubGlobal('fetch', vi.fn(async () => jsonResponse({ detail: 'this needs the operator role; vera is viewer' }, 403)));
    const e = await unwrap(api.POST('/api/runs/{run_id}/cancel', { params: { path: { run_id: 1 } } })).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).message).toBe('Your role (viewer) cannot do this: this needs the operator role; vera is viewer');
    expect((e as ApiError).detail).toBe('this needs the operator role; vera is viewer');
  });

  it('a 403 for a missing CSRF token or a foreign origin is not blamed on the role', () => {
    setSignedInRole('admin');
    expect(ApiError.fromBody(403, { detail: 'missing or wrong x-csrf-token header (CSRF protection); reload the page' }).message).toBe(
      'Refused by the server: missing or wrong x-csrf-token header (CSRF protection); reload the page',
    );
    expect(ApiError.fromBody(403, { detail: 'cross-site requests are refused' }).message).toBe('Refused by the server: cross-site requests are refused');
  });

  it('a 429 carries Retry-After as seconds', () => {
    const e = ApiError.fromBody(429, { detail: 'too many sign-in attempts' }, '', new Headers({ 'Retry-After': '600' }));
    expect(e.retryAfterS).toBe(600);
    expect(e.message).toBe('too many sign-in attempts (try again in 10 min)');
  });
});
