// Route paths in one place; features link with these, the router mounts them.
export const paths = {
  hosts: '/',
  newJob: (hostId?: number) => (hostId === undefined ? '/jobs/new' : `/jobs/new?host=${hostId}`),
  /** Run history; `query` is the filter state as URL search parameters. */
  history: (query?: Record<string, string | number>) => {
    const qs = new URLSearchParams(Object.entries(query ?? {}).map(([k, v]) => [k, String(v)])).toString();
    return qs ? `/history?${qs}` : '/history';
  },
  run: (id: number | string) => `/runs/${id}`,
  /** Hosts tested together: the form and the recent ones; one mesh's matrix. */
  meshes: '/meshes',
  mesh: (id: number | string) => `/meshes/${id}`,
  compare: (ids: readonly number[] = [], baseline?: number | null) => {
    const parts: string[] = [];
    if (ids.length) parts.push(`runs=${ids.join(',')}`);
    if (baseline !== undefined && baseline !== null) parts.push(`baseline=${baseline}`);
    return parts.length ? `/compare?${parts.join('&')}` : '/compare';
  },
  /** The sign-in page; `next` is where to go back to afterwards (a path on this site). */
  signIn: (next?: string) => (next && next !== '/' ? `/signin?next=${encodeURIComponent(next)}` : '/signin'),
  /** A one-time sign-in link carries its token in the fragment: `/signin/link#hblink_…`. */
  signInLink: '/signin/link',
  account: '/account',
  users: '/users',
  audit: '/audit',
} as const;

/** At most this many runs side by side (the overlay stays readable, and smooth with decimation). */
export const COMPARE_MAX_RUNS = 10;
