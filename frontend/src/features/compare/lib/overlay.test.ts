import { describe, expect, it } from 'vitest';
import { sample } from '../../../test/fixtures';
import { tracePoints } from './overlay';

describe('tracePoints', () => {
  it('draws each trace from its own start, leaves warm-up out and keeps gaps as gaps', () => {
    const points = tracePoints([sample(0, { warmup: true }), sample(1), sample(2), sample(4)]);
    expect(points.map((p) => p.x)).toEqual([2, 3, 4, 5]);
    expect(points.map((p) => p.y)).toEqual([51, 52, null, 54]);
  });

  it('gives nothing for no samples', () => {
    expect(tracePoints([])).toEqual([]);
  });
});
