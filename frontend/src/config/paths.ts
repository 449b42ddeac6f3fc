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
  compare: (ids: readonly number[] = [], baseline?: number | null) => {
    const parts: string[] = [];
    if (ids.length) parts.push(`runs=${ids.join(',')}`);
    if (baseline !== undefined && baseline !== null) parts.push(`baseline=${baseline}`);
    return parts.length ? `/compare?${parts.join('&')}` : '/compare';
  },
} as const;

/** At most this many runs side by side (the overlay stays readable, and smooth with decimation). */
export const COMPARE_MAX_RUNS = 10;
