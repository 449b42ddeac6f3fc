import { describe, expect, it } from 'vitest';
import { sample } from '../../../test/fixtures';
import { summaryLines, throttleText, throttleX, traceMarkers } from './trace';

const throttle = { at_s: 300, baseline: 50, level: 44, drop: 0.12 };
const trace = { n: 600, min: 43, mean: 47, max: 51, stddev: 2, throttle, stretches: [], flags: [] };

describe('throttle marker placement', () => {
  it('puts at_s after the first measured sample, on the chart clock (seconds since run start)', () => {
    // Run starts at t = 1000 (kernel start); 2 warm-up samples end at 1001 and 1002; the first
    // measured sample is seq 2 with t = 1003. The backend's at_s counts from that sample's t.
    const samples = [sample(0, { warmup: true }), sample(1, { warmup: true }), sample(2), sample(3)];
    expect(throttleX(samples, 1000, throttle)).toBe(303);
    // Without a kernel start the origin is the first interval's start (t 1001 − 1 s = 1000).
    expect(throttleX(samples, null, throttle)).toBe(303);
    expect(throttleX([sample(0), sample(1)], 995, throttle)).toBe(1001 - 995 + 300);
  });

  it('places nothing without a throttle or without measured samples', () => {
    expect(throttleX([sample(0)], 1000, null)).toBeNull();
    expect(throttleX([sample(0, { warmup: true })], 1000, throttle)).toBeNull();
    expect(traceMarkers([sample(0)], 1000, { ...trace, throttle: null, stretches: [], flags: [] })).toEqual([]);
  });

  it('labels the marker with the drop and describes it in words', () => {
    expect(traceMarkers([sample(0)], 1000, trace)).toEqual([{ x: 301, label: 'throttling −12 %', kind: 'alert' }]);
    expect(throttleText(throttle, 'GFLOP/s')).toBe('sustained drop of 12 % at 300 s: 50 → 44 GFLOP/s (30-sample median)');
  });
});

describe('summaryLines', () => {
  it('draws max, mean and min as flat lines across the trace', () => {
    const lines = summaryLines(trace, 1, 600);
    expect(lines.map((l) => l.label)).toEqual(['max', 'mean', 'min']);
    expect(lines[1]?.points).toEqual([
      { x: 1, y: 47 },
      { x: 600, y: 47 },
    ]);
  });
});
