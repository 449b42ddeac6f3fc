import { describe, expect, it } from 'vitest';
import type { Experiment } from '../../../lib/api/types';
import { describeItem, describeParams, elapsedSince, formatEstimate, runsDoneText, suiteItems } from './describe';

const exp = (kind: string, title: string, extra: Partial<Experiment> = {}) =>
  ({
    kind,
    title,
    roles: ['host'],
    run_kinds: [kind],
    parameters: { properties: { repeats: { default: 1 }, duration_s: { default: 5 }, warmup_s: { default: 0 } } },
    applies: {},
    duration: { per_item: ['sizes'], fixed: {}, fan_out: 'op', reference_allowance_s: 10, reference_per: null },
    ...extra,
  }) as unknown as Experiment;

const EXPS = [exp('cpu', 'CPU'), exp('network', 'Network'), exp('network_pair', 'Network between hosts', { roles: ['serve', 'drive'] }), exp('gpu', 'GPU')];

describe('formatEstimate', () => {
  it('is the job form duration, approximate', () => {
    expect(formatEstimate(96)).toBe('≈ 1 min 36 s');
    expect(formatEstimate(45)).toBe('≈ 45 s');
    expect(formatEstimate(3720)).toBe('≈ 1 h 2 min');
    expect(formatEstimate(undefined)).toBe('—');
  });
});

describe('describeParams / describeItem', () => {
  it('names ops, threads, sizes and timing in words', () => {
    expect(describeParams({ op: ['fp64', 'int32'], threads: [1, 2], repeats: 1, duration_s: 5, warmup_s: 1 })).toBe(
      'ops fp64, int32 · 1, 2 threads · 5 s each, 1 repeat',
    );
    expect(describeParams({ ops: ['seq_read'], blocks: [4096, 1048576], threads: [1], file_size: 268435456 })).toBe(
      'op seq_read · 1 thread · blocks 4 KiB, 1 MiB · file 256 MiB',
    );
    expect(describeParams({ op: 'tcp_rr', sizes: [1, 65536], reference: true })).toBe('op tcp_rr · sizes 1 B, 64 KiB · reference tools on');
    expect(describeParams({})).toBe('');
  });

  it('titles the experiment and says what the item needs of the hosts', () => {
    expect(describeItem({ experiment: 'cpu', params: { op: ['fp64'], threads: [4] } }, EXPS)).toBe('CPU: op fp64 · 4 threads');
    expect(describeItem({ experiment: 'network_pair', params: { op: 'tcp_rr' } }, EXPS)).toBe('Network between hosts: op tcp_rr (needs two hosts)');
    expect(describeItem({ experiment: 'gpu', params: {}, needs: 'gpu' }, EXPS)).toBe('GPU (needs a host with a GPU)');
    expect(describeItem({ experiment: 'unknown', params: {} })).toBe('unknown');
  });
});

describe('suiteItems', () => {
  it('counts the items that need two hosts or a GPU', () => {
    const suite = {
      items: [
        { experiment: 'cpu', params: { op: ['fp64'] } },
        { experiment: 'network_pair', params: { op: 'tcp_rr', sizes: [1, 2], repeats: 2 } },
        { experiment: 'gpu', params: {}, needs: 'gpu' },
      ],
    };
    expect(suiteItems(suite, EXPS)).toEqual({ twoHostItems: 1, gpuItems: 1 });
  });
});

describe('progress', () => {
  it('counts runs done of all', () => {
    expect(runsDoneText(12, 19, 12 / 19)).toBe('12 of 19 runs done (63.2 %)');
    expect(runsDoneText(0, 1, 0)).toBe('0 of 1 run done (0 %)');
  });
  it('elapsed is never negative', () => {
    expect(elapsedSince('2026-01-01T00:00:10Z', Date.parse('2026-01-01T00:01:00Z'))).toBe(50);
    expect(elapsedSince('2026-01-01T00:00:10Z', Date.parse('2026-01-01T00:00:00Z'))).toBe(0);
    expect(elapsedSince('nope')).toBeUndefined();
  });
});
