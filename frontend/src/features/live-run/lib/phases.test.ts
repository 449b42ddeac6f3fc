import { describe, expect, it } from 'vitest';
import { networkPairExperiment, sample } from '../../../test/fixtures';
import { axesOf } from '../../../lib/axes';
import { buildSeries } from '../../../lib/series';
import { phaseMarkers, sameMarkers } from './phases';

describe('phaseMarkers', () => {
  it('marks warm-up, each repeat and each thread count where its first interval starts', () => {
    const samples = [
      sample(0, { threads: 1, warmup: true, repeat: 0 }),
      sample(1, { threads: 1, repeat: 1 }),
      sample(2, { threads: 1, repeat: 1 }),
      sample(3, { threads: 1, repeat: 2 }),
      sample(4, { threads: 2, warmup: true, repeat: 0 }),
      sample(5, { threads: 2, repeat: 1 }),
    ];
    expect(phaseMarkers(samples, 1000)).toEqual([
      { x: 0, label: '1 thread · warm-up', kind: 'config' },
      { x: 1, label: 'repeat 1', kind: 'repeat' },
      { x: 3, label: 'repeat 2', kind: 'repeat' },
      { x: 4, label: '2 threads · warm-up', kind: 'config' },
      { x: 5, label: 'repeat 1', kind: 'repeat' },
    ]);
  });

  it('names the block size (and op) when they change', () => {
    const samples = [
      sample(0, { op: 'copy', block_bytes: 8, repeat: 1 }),
      sample(1, { op: 'copy', block_bytes: 8 * 1024, repeat: 1 }),
      sample(2, { op: 'scale', block_bytes: 8 * 1024, repeat: 1 }),
    ];
    expect(phaseMarkers(samples, 1000).map((m) => m.label)).toEqual(['copy · 8 B · 1 thread · repeat 1', 'copy · 8 KiB · 1 thread · repeat 1', 'scale · 8 KiB · 1 thread · repeat 1']);
  });

  it('counts the streams of a network run in its words (issue 32)', () => {
    const words = axesOf([networkPairExperiment], 'network_drive');
    const samples = [sample(0, { op: 'tcp_stream', threads: 1, repeat: 1 }), sample(1, { op: 'tcp_stream', threads: 2, repeat: 1 })];
    expect(phaseMarkers(samples, 1000, words).map((m) => m.label)).toEqual(['1 stream · repeat 1', '2 streams · repeat 1']);
    expect(buildSeries(samples, 1000, undefined, words).map((s) => s.label)).toEqual(['1 stream', '2 streams']);
  });

  it('marks a return from warm-up to measurement at the same thread count as a warm-up → repeat change', () => {
    const m = phaseMarkers([sample(0, { warmup: true, repeat: 0 }), sample(1, { warmup: false, repeat: 1 })], null);
    expect(m.map((x) => x.kind)).toEqual(['config', 'repeat']);
    expect(m[0]?.x).toBe(0);
  });

  it('has no markers without samples, and compares markers by content', () => {
    expect(phaseMarkers([], 1000)).toEqual([]);
    const a = phaseMarkers([sample(0)], 1000);
    expect(sameMarkers(a, phaseMarkers([sample(0), sample(1)], 1000))).toBe(true);
    expect(sameMarkers(a, [])).toBe(false);
  });
});
