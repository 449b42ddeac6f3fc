// The CSRF token the server set at sign-in in the readable cookie `hb_csrf` (the session itself is in
// the HttpOnly `hb_session`). Every state-changing request sends it back as `X-CSRF-Token`; a page on
// another site can neither read the cookie nor set the header.
export const CSRF_COOKIE = 'hb_csrf';
export const CSRF_HEADER = 'X-CSRF-Token';

export function readCookie(name: string, cookies: string = globalThis.document?.cookie ?? ''): string | null {
  for (const part of cookies.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const raw = part.slice(eq + 1).trim();
      try {
        return decodeURIComponent(raw);
      } catch {
        return raw;
      }
    }
  }
  return null;
}

export function csrfToken(): string | null {
  return readCookie(CSRF_COOKIE);
}

/** Methods that change state; only these need the token. */
export function needsCsrf(method: string): boolean {
  return !['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase());
}
