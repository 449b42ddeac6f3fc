import { QueryClient } from '@tanstack/react-query';
import { ApiError } from './api/errors';

// A server that sheds load answers 503 (or 429) with Retry-After. A read asks again after the time it was
// told, a few times, before the page shows the error: on a small server that is also running benchmarks a
// burst of refusals passes within seconds, and two quick retries used to turn it into "Could not load".
const SHED_RETRIES = 5;
const OTHER_RETRIES = 2;
const MAX_WAIT_MS = 10_000;

function told(error: unknown): number | null {
  return error instanceof ApiError && (error.status === 503 || error.status === 429) ? error.retryAfterS : null;
}

/** Whether a failed read is asked again (`count` failures so far). A 4xx will not get better by asking
 * again, except a 429 that says when to; a network error or 5xx might. */
export function shouldRetry(count: number, error: unknown): boolean {
  if (told(error) !== null) return count < SHED_RETRIES;
  if (error instanceof ApiError && error.status >= 400 && error.status < 500) return false;
  return count < OTHER_RETRIES;
}

/** How long before asking again: what Retry-After said (at least 1 s, at most 10 s), else 1 s, 2 s, 4 s ... */
export function retryDelayMs(count: number, error: unknown): number {
  const after = told(error);
  if (after !== null) return Math.min(MAX_WAIT_MS, Math.max(1000, after * 1000));
  return Math.min(MAX_WAIT_MS, 1000 * 2 ** Math.max(0, count - 1));
}

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 5_000,
        retry: shouldRetry,
        retryDelay: retryDelayMs,
        refetchOnWindowFocus: true,
      },
      mutations: { retry: false },
    },
  });
}
