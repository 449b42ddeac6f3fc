import { describe, expect, it } from 'vitest';
import { sample } from '../test/fixtures';
import { buildSeries } from './series';

describe('buildSeries', () => {
  it('uses seconds since run start on x and the sample value on y', () => {
    const [s] = buildSeries([sample(0), sample(1), sample(2)], 1000);
    expect(s?.points).toEqual([
      { x: 1, y: 50 },
      { x: 2, y: 51 },
      { x: 3, y: 52 },
    ]);
  });

  it('draws a missing seq as a gap (null point), not a line across it', () => {
    const [s] = buildSeries([sample(0), sample(1), sample(3)], 1000);
    expect(s?.points.map((p) => p.y)).toEqual([50, 51, null, 53]);
  });

  it('draws a time jump over 2 × interval as a gap even when seqs are contiguous', () => {
    const [s] = buildSeries([sample(0), sample(1), sample(2, { t: 1010 })], 1000);
    expect(s?.points.map((p) => p.y)).toEqual([50, 51, null, 52]);
    const [ok] = buildSeries([sample(0), sample(1, { t: 1003.9, interval_s: 2 })], 1000);
    expect(ok?.points.map((p) => p.y)).toEqual([50, 51]);
  });

  it('keeps one series per thread count and puts warm-up in its own series bridged into the measurement', () => {
    const samples = [
      sample(0, { threads: 1, warmup: true, repeat: 0, value: 40 }),
      sample(1, { threads: 1, value: 50 }),
      sample(2, { threads: 1, value: 51 }),
      sample(3, { threads: 2, warmup: true, repeat: 0, value: 80 }),
      sample(4, { threads: 2, value: 100 }),
    ];
    const series = buildSeries(samples, 1000);
    expect(series.map((s) => s.label)).toEqual(['1 thread (warm-up)', '1 thread', '2 threads (warm-up)', '2 threads']);
    expect(series[0]?.points).toEqual([
      { x: 1, y: 40 },
      { x: 2, y: 50 },
    ]);
    expect(series[1]?.points.map((p) => p.y)).toEqual([50, 51]);
    expect(series[3]?.points).toEqual([{ x: 5, y: 100 }]);
  });

  it('defaults the origin to the start of the first interval', () => {
    const [s] = buildSeries([sample(5), sample(6)], null);
    expect(s?.points[0]?.x).toBe(1);
  });
});

describe('buildSeries with block sizes', () => {
  it('keeps one series per block size and names it', () => {
    const series = buildSeries(
      [sample(0, { op: 'seq_read', block_bytes: 8, unit: 'MB/s' }), sample(1, { op: 'seq_read', block_bytes: 8192, unit: 'MB/s' })],
      1000,
    );
    expect(series.map((s) => s.label)).toEqual(['8 B 1 thread', '8 KiB 1 thread']);
    expect(series.map((s) => s.block_bytes)).toEqual([8, 8192]);
  });
});
