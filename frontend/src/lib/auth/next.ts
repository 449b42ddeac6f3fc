// Where to go back to after signing in. Only a path on this site is accepted, so a crafted
// `/signin?next=https://evil.example` (or `//evil.example`) cannot send a person elsewhere.
export function safeNext(next: string | null | undefined): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  if (next.startsWith('/signin')) return '/';
  return next;
}

/** The current location as a return path. */
export function currentPath(loc: { pathname: string; search: string; hash: string } = globalThis.location): string {
  return `${loc.pathname}${loc.search}${loc.hash}`;
}
