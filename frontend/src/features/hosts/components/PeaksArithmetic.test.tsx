import { describe, expect, it } from 'vitest';
import { host } from '../../../test/fixtures';
import { arithmetic } from './PeaksSection';

describe('peak hand entry', () => {
  it('shows the arithmetic with the factors the host knows, and the current formula', () => {
    expect(arithmetic(host, 'cpu_fp64')).toBe(
      'Whole host: 2 cores × clock (GHz) × FLOP per cycle per core (FMA units × FP64 lanes of avx512 × 2). Now: 2 cores × 3.700 GHz × 16 FLOP/cycle.',
    );
    expect(arithmetic(host, 'memory_bw')).toMatch(/^Channels × MT\/s × 8 bytes/);
  });
});
