import { describe, expect, it } from 'vitest';
import { networkPairExperiment, resultRow } from '../../../test/fixtures';
import { axesOf } from '../../../lib/axes';
import { groupMatrix } from '../../../lib/matrix';
import { cacheMarkers, latencyBars, throughputBars } from './chart-data';

const KiB = 1024;

describe('throughputBars', () => {
  it('CPU: one bar per thread count, mean with a ± stddev whisker, invalid flagged', () => {
    const [m] = groupMatrix([resultRow({ threads: 1, mean: 50, stddev: 2 }), resultRow({ threads: 2, mean: 98, stddev: 0, valid: false, invalid_reason: 'x' })]);
    const bars = throughputBars(m!);
    expect(bars).toMatchObject({ categories: ['1 thread', '2 threads'], xTitle: 'threads', unit: 'GFLOP/s' });
    expect(bars.series).toHaveLength(1);
    expect(bars.series[0]).toMatchObject({ values: [50, 98], errors: [{ low: 48, high: 52 }, null], invalid: [false, true] });
    expect(bars.series[0]?.notes?.[1]).toContain('invalid: x');
  });

  it('memory: grouped by block size, one series per thread count, holes where a cell is missing', () => {
    const rows = [
      resultRow({ op: 'copy', unit: 'MB/s', block_bytes: 8, threads: 1, mean: 100, stddev: 1 }),
      resultRow({ op: 'copy', unit: 'MB/s', block_bytes: 8 * KiB, threads: 1, mean: 900, stddev: 10 }),
      resultRow({ op: 'copy', unit: 'MB/s', block_bytes: 8 * KiB, threads: 4, mean: 3000, stddev: 30 }),
    ];
    const bars = throughputBars(groupMatrix(rows)[0]!);
    expect(bars.categories).toEqual(['8 B', '8 KiB']);
    expect(bars.xTitle).toBe('block size');
    expect(bars.series.map((s) => s.label)).toEqual(['1 thread', '4 threads']);
    expect(bars.series[1]?.values).toEqual([null, 3000]);
    expect(bars.series[1]?.errors).toEqual([null, { low: 2970, high: 3030 }]);
  });
});

describe('network bars in network terms (issue 32)', () => {
  it('groups by message size with a series per stream count, and names the axes so', () => {
    const rows = [
      resultRow({ op: 'tcp_rr', unit: 'RT/s', block_bytes: 64, threads: 1, mean: 30000, extra: { lat_p50_us: 30 }, extra_units: { lat_p50_us: 'µs' }, extra_lower_is_better: ['lat_p50_us'] }),
      resultRow({ op: 'tcp_rr', unit: 'RT/s', block_bytes: 64, threads: 2, mean: 50000, extra: { lat_p50_us: 40 }, extra_units: { lat_p50_us: 'µs' }, extra_lower_is_better: ['lat_p50_us'] }),
    ];
    const m = groupMatrix(rows)[0]!;
    const a = axesOf([networkPairExperiment], 'network')('tcp_rr');
    expect(axesOf([networkPairExperiment], 'network_drive')('tcp_rr')).toMatchObject({ counts: 'streams', size: 'message size' });
    const pair = axesOf([networkPairExperiment], 'network_drive')('tcp_rr');
    const bars = throughputBars(m, pair);
    expect(bars.xTitle).toBe('message size');
    expect(bars.series.map((s) => s.label)).toEqual(['1 stream', '2 streams']);
    expect(latencyBars(m, pair)).toMatchObject({ categories: ['64 B · 1 stream', '64 B · 2 streams'], xTitle: 'message size' });
    // the loopback run kind is not in this fixture: the field names, never a guess
    expect(throughputBars(m, a).xTitle).toBe('block size');
  });
});

describe('latencyBars', () => {
  // as the backend attaches them from the disk kernel's declaration
  const units = { extra_units: { lat_p99_us: 'µs', lat_p50_us: 'µs', lat_avg_us: 'µs', iops: 'IOPS' }, extra_lower_is_better: ['lat_avg_us', 'lat_p50_us', 'lat_p99_us'] };

  it('draws the latency extras in percentile order, in their unit', () => {
    const rows = [
      resultRow({ op: 'rand_read', unit: 'MB/s', block_bytes: 4 * KiB, threads: 1, extra: { lat_p99_us: 90, iops: 5000, lat_p50_us: 40, lat_avg_us: 45 }, ...units }),
      resultRow({ op: 'rand_read', unit: 'MB/s', block_bytes: 4 * KiB, threads: 2, extra: { lat_p99_us: 120, lat_p50_us: 60, lat_avg_us: 65 }, ...units }),
    ];
    const bars = latencyBars(groupMatrix(rows)[0]!);
    expect(bars?.unit).toBe('µs');
    expect(bars?.categories).toEqual(['4 KiB · 1 thread', '4 KiB · 2 threads']);
    expect(bars?.series.map((s) => s.label)).toEqual(['Avg latency', 'p50 latency', 'p99 latency']);
    expect(bars?.series[2]?.values).toEqual([90, 120]);
  });

  it('is null when the rows carry no latency', () => {
    expect(latencyBars(groupMatrix([resultRow({ extra: { cpu_share: 1 } })])[0]!)).toBeNull();
  });

  it('takes latency-ness from the row, not from the key: a time the kernel does not call a latency is not drawn', () => {
    const row = resultRow({ op: 'copy', unit: 'MB/s', block_bytes: 8, extra: { ns_per_op: 2.5, rtt_p50_us: 30 }, extra_units: { ns_per_op: 'ns', rtt_p50_us: 'µs' }, extra_lower_is_better: ['rtt_p50_us'] });
    const bars = latencyBars(groupMatrix([row])[0]!);
    expect(bars?.unit).toBe('µs');
    expect(bars?.series.map((s) => s.label)).toEqual(['Rtt p50']);
    expect(latencyBars(groupMatrix([{ ...row, extra_lower_is_better: [] }])[0]!)).toBeNull();
  });
});

describe('cacheMarkers', () => {
  const blocks = [4 * KiB, 64 * KiB, 1024 * KiB, 64 * 1024 * KiB];

  it('puts each detected cache between the block sizes around it, by log size, labelled with its size', () => {
    const marks = cacheMarkers(blocks, { L1d: 32 * KiB, L2: 1024 * KiB, L3: 32 * 1024 * KiB });
    expect(marks.map((m) => m.label)).toEqual(['L1d 32 KiB', 'L2 1 MiB', 'L3 32 MiB']);
    expect(marks[0]?.x).toBeCloseTo(0.75); // 32 KiB: 3 of the 4 doublings from 4 KiB to 64 KiB
    expect(marks[1]?.x).toBe(2); // on the 1 MiB bar
    expect(marks[2]?.x).toBeCloseTo(2 + 5 / 6); // 32 MiB: 5 of the 6 doublings from 1 MiB to 64 MiB
    expect(marks.every((m) => m.kind === 'config')).toBe(true);
  });

  it('leaves out a size outside the blocks measured, and draws nothing without caches', () => {
    expect(cacheMarkers(blocks, { L1d: 2 * KiB, L3: 256 * 1024 * KiB })).toEqual([]);
    expect(cacheMarkers(blocks, null)).toEqual([]);
    expect(cacheMarkers([null], { L1d: 32 * KiB })).toEqual([]);
  });

  it('says the level a row fits in in its tooltip notes', () => {
    const [m] = groupMatrix([resultRow({ op: 'read', unit: 'MB/s', block_bytes: 64, threads: 1, level: 'L2' })]);
    expect(throughputBars(m!).series[0]?.notes?.[0]).toContain('working set fits in L2');
  });
});
