// Route paths in one place; features link with these, the router mounts them.
export const paths = {
  hosts: '/',
  newJob: (hostId?: number) => (hostId === undefined ? '/jobs/new' : `/jobs/new?host=${hostId}`),
  runs: '/runs',
  run: (id: number | string) => `/runs/${id}`,
} as const;
