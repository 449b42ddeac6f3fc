// The one HTTP client. Types come from schema.d.ts, generated from openapi.json (`npm run gen:api`);
// never retype an API shape by hand — derive it in types.ts.
//
// Two things every call gets here, so no feature can forget them:
// - state-changing requests carry `X-CSRF-Token` (the value of the `hb_csrf` cookie);
// - a 401 (the session ended or never was) tells the app, which goes to the sign-in page and comes
//   back afterwards. The sign-in calls themselves and GET /api/auth/me answer 401 as a normal outcome
//   (wrong password; not signed in yet), so they are left to their callers.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';
import { apiOrigin } from '../../config/env';
import { CSRF_HEADER, csrfToken, needsCsrf } from './csrf';

type UnauthorizedListener = () => void;
let unauthorized: UnauthorizedListener | null = null;

/** The app registers what a 401 does (go to sign-in); returns the unregister function. */
export function onUnauthorized(listener: UnauthorizedListener): () => void {
  unauthorized = listener;
  return () => {
    if (unauthorized === listener) unauthorized = null;
  };
}

const SELF_HANDLED_401 = ['/api/auth/login', '/api/auth/link', '/api/auth/me', '/api/auth/password'];

export const authMiddleware: Middleware = {
  onRequest({ request }) {
    if (!needsCsrf(request.method)) return undefined;
    const token = csrfToken();
    if (token) request.headers.set(CSRF_HEADER, token);
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401) {
      const path = new URL(request.url, 'http://x').pathname;
      if (!SELF_HANDLED_401.includes(path)) unauthorized?.();
    }
    return undefined;
  },
};

export const api = createClient<paths>({
  baseUrl: apiOrigin(),
  // Late-bound so tests (and polyfills) that replace globalThis.fetch after import are honoured.
  fetch: (request: Request) => globalThis.fetch(request),
});
api.use(authMiddleware);
