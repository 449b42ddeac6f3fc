import { describe, expect, it } from 'vitest';
import { ApiError } from './api/errors';
import { retryDelayMs, shouldRetry } from './query-client';

const shed = (after: number | null) => ApiError.fromBody(503, { detail: 'the server is busy; retry shortly' }, '',
  new Headers(after === null ? {} : { 'Retry-After': String(after) }));

describe('reads refused while the server sheds load', () => {
  it('keep the Retry-After of a 503', () => {
    expect(shed(2).retryAfterS).toBe(2);
    expect(shed(2).message).toBe('the server is busy; retry shortly');
  });

  it('are asked again five times, each after the wait the server named (1 to 10 s)', () => {
    expect([0, 1, 2, 3, 4].map((n) => shouldRetry(n, shed(2)))).toEqual([true, true, true, true, true]);
    expect(shouldRetry(5, shed(2))).toBe(false);
    expect(retryDelayMs(1, shed(2))).toBe(2000);
    expect(retryDelayMs(1, shed(0))).toBe(1000);
    expect(retryDelayMs(1, shed(600))).toBe(10_000);
  });

  it('a 503 without Retry-After, a network error: twice, 1 s then 2 s', () => {
    expect(shouldRetry(1, shed(null))).toBe(true);
    expect(shouldRetry(2, shed(null))).toBe(false);
    expect(shouldRetry(1, new TypeError('Failed to fetch'))).toBe(true);
    expect(shouldRetry(2, new TypeError('Failed to fetch'))).toBe(false);
    expect(retryDelayMs(1, new TypeError('x'))).toBe(1000);
    expect(retryDelayMs(2, new TypeError('x'))).toBe(2000);
  });

  it('a 4xx is not asked again, except a 429 that says when', () => {
    expect(shouldRetry(0, ApiError.fromBody(404, { detail: 'no such run' }))).toBe(false);
    expect(shouldRetry(0, ApiError.fromBody(422, { detail: [] }))).toBe(false);
    const limited = ApiError.fromBody(429, { detail: 'too many' }, '', new Headers({ 'Retry-After': '3' }));
    expect(shouldRetry(0, limited)).toBe(true);
    expect(retryDelayMs(1, limited)).toBe(3000);
  });
});
