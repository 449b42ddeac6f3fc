import { describe, expect, it } from 'vitest';
import { REFERENCE_ALLOWANCE_S, expectedDuration } from './experiments';

describe('expectedDuration (the server expected_duration_s, computed the same way)', () => {
  it('adds the reference allowance per thread count and takes the repeat-until-stable worst case', () => {
    const p = { op: 'fp64', threads: [1, 2], repeats: 2, duration_s: 5, warmup_s: 1 };
    expect(expectedDuration('cpu', p)).toEqual({ measuring: 22, upTo: 22, reference: 0 });
    expect(expectedDuration('cpu', { ...p, reference: true })).toEqual({ measuring: 22, upTo: 22 + 2 * REFERENCE_ALLOWANCE_S, reference: 2 * REFERENCE_ALLOWANCE_S });
    expect(expectedDuration('cpu', { ...p, stable_cv: 0.01, max_repeats: 10 })?.upTo).toBe(2 * (1 + 10 * 5));
  });
});

describe('fieldApplies', () => {
  it('STREAM ops have no block size; only latency has sizes', async () => {
    const { fieldApplies } = await import('./experiments');
    expect(fieldApplies('memory', 'blocks', { op: 'stream_triad' })).toBe(false);
    expect(fieldApplies('memory', 'sizes', { op: 'stream_triad' })).toBe(false);
    expect(fieldApplies('memory', 'blocks', { op: 'copy' })).toBe(true);
    expect(fieldApplies('memory', 'sizes', { op: 'latency' })).toBe(true);
    expect(fieldApplies('memory', 'blocks', { op: 'latency' })).toBe(false);
    expect(fieldApplies('cpu', 'threads', { op: 'fp64' })).toBe(true);
  });
});
