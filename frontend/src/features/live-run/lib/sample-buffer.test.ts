import { describe, expect, it } from 'vitest';
import { sample } from '../../../test/fixtures';
import { mergeSamples, parseSample } from './sample-buffer';

const seqs = (xs: { seq: number }[]) => xs.map((s) => s.seq);

describe('mergeSamples', () => {
  it('appends in order and drops duplicates from a replayed backlog', () => {
    let buf = mergeSamples([], [sample(0), sample(1), sample(2)], 100);
    buf = mergeSamples(buf, [sample(1), sample(2), sample(3)], 100);
    expect(seqs(buf)).toEqual([0, 1, 2, 3]);
  });

  it('puts a late sample in its seq position', () => {
    const buf = mergeSamples([sample(0), sample(2), sample(3)], [sample(1), sample(1)], 100);
    expect(seqs(buf)).toEqual([0, 1, 2, 3]);
  });

  it('is bounded: the oldest points fall out first', () => {
    const buf = mergeSamples([], Array.from({ length: 10 }, (_, i) => sample(i)), 4);
    expect(seqs(buf)).toEqual([6, 7, 8, 9]);
  });

  it('returns the same array when nothing arrived (no needless re-render)', () => {
    const buf = [sample(0)];
    expect(mergeSamples(buf, [], 10)).toBe(buf);
  });
});

describe('parseSample', () => {
  it('accepts a Sample and rejects malformed payloads', () => {
    expect(parseSample(JSON.stringify(sample(4)))).toMatchObject({ seq: 4, value: 54, unit: 'GFLOP/s', warmup: false });
    expect(parseSample('not json')).toBeNull();
    expect(parseSample(JSON.stringify({ seq: 'x', t: 1, value: 1 }))).toBeNull();
    expect(parseSample(JSON.stringify({ seq: 1, t: 1 }))).toBeNull();
  });
});
