// The API lives on the same origin under /api (FastAPI serves the built app; Vite proxies in dev).
export function apiOrigin(): string {
  return globalThis.location?.origin ?? '';
}

export function apiUrl(path: string): string {
  return `${apiOrigin()}${path}`;
}
