import { describe, expect, it } from 'vitest';
import type { SeriesPublic } from '../api/trends';
import { cpuExperiment, networkPairExperiment } from '../../../test/fixtures';
import { decodeMetric, encodeMetric, metricLabel, readScope, runsWords, scopeQuery, thresholdY, trendChart, writeScope } from './series';

const q = (s: string) => new URLSearchParams(s);

const point = (i: number, mean: number, used = true) => ({
  run_id: i, host_id: 1, host_name: 'h', at: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(), mean,
  ci95_low: i === 2 ? null : mean * 0.9, ci95_high: i === 2 ? null : mean * 1.1, n: 3, verdict: used ? 'valid' : 'disturbed',
  used, excluded_reason: used ? null : 'disturbed: lost its CPU',
});

const series = (over: Partial<SeriesPublic> = {}): SeriesPublic => ({
  metric: { experiment: 'cpu', op: 'fp64', threads: 2, block_bytes: null },
  unit: 'GFLOP/s', lower_is_better: false, has_more: false, excluded: 1,
  points: [point(0, 100), point(1, 102), point(2, 50, false), point(3, 80), point(4, 81)],
  changes: [{ run_id: 3, at: point(3, 0).at, detected_run_id: 4, kind: 'regression', before: 101, after: 80.5, effect: -0.2, p_value: 0.001 }],
  method: { name: 'mw', baseline_min: 8, baseline_max: 20, test_window: 8, alpha: 0.002, min_effect: 0.03, doc: 'd' },
  thresholds: [
    { id: 7, host_id: 1, label_key: null, label_value: null, experiment: 'cpu', op: 'fp64', threads: 2, block_bytes: null, kind: 'below', value: 90, created_by: 'o', created_at: '2026-01-01T00:00:00Z' },
    { id: 8, host_id: 1, label_key: null, label_value: null, experiment: 'cpu', op: 'fp64', threads: 2, block_bytes: null, kind: 'drop_pct', value: 10, created_by: 'o', created_at: '2026-01-01T00:00:00Z' },
  ],
  events: [],
  ...over,
});

describe('trend scope and metric in the URL', () => {
  it('reads a host or one label, and nothing else', () => {
    expect(readScope(q('host=3'))).toEqual({ host: 3 });
    expect(readScope(q('label=instance_type%3Am5.large'))).toEqual({ label: 'instance_type', value: 'm5.large' });
    expect(readScope(q('label=colour:red'))).toBeNull();
    expect(readScope(q('host=-1'))).toBeNull();
    expect(readScope(q('label=region:'))).toBeNull();
  });

  it('writes back what it reads and makes the API query of it', () => {
    const s = { label: 'region', value: 'eu-west-1' } as const;
    expect(readScope(q(writeScope(s)))).toEqual(s);
    expect(scopeQuery(s)).toEqual({ region: 'eu-west-1' });
    expect(scopeQuery({ host: 4 })).toEqual({ host_id: 4 });
  });

  it('encodes a metric as one value and decodes it, refusing nonsense', () => {
    const m = { experiment: 'memory', op: 'copy', threads: 2, block_bytes: 8388608 };
    expect(decodeMetric(encodeMetric(m))).toEqual(m);
    expect(decodeMetric('cpu|fp64|2|')).toEqual({ experiment: 'cpu', op: 'fp64', threads: 2, block_bytes: null });
    expect(decodeMetric('cpu|fp64|0|')).toBeNull();
    expect(decodeMetric('cpu|fp64|2|-5')).toBeNull();
    expect(metricLabel(m)).toBe('memory: Copy (read + write), 8 MiB blocks, 2 threads');
  });

  it('names a metric in words: the experiment, the op, the size and count in its own terms (issue 32)', () => {
    const net = { experiment: 'network_drive', op: 'tcp_stream', threads: 1, block_bytes: 1 };
    expect(metricLabel(net, [networkPairExperiment])).toBe('Network (two hosts): TCP throughput, 1 B messages, 1 stream');
    expect(metricLabel({ ...net, op: 'udp_stream', threads: 2, block_bytes: 65507 }, [networkPairExperiment])).toBe(
      'Network (two hosts): UDP throughput, 65,507 B datagrams, 2 streams',
    );
    expect(metricLabel({ experiment: 'cpu', op: 'fp64', threads: 4 }, [cpuExperiment])).toBe('CPU throughput: FP64 FLOPS, 4 threads');
    expect([runsWords(1), runsWords(3)]).toEqual(['1 run', '3 runs']);
  });
});

describe('what the trend chart draws', () => {
  it('separates the judged points from those left out, and bands only points with a CI', () => {
    const d = trendChart(series());
    expect(d.used.map((p) => p.y)).toEqual([100, 102, 80, 81]);
    expect(d.excluded.map((p) => p.y)).toEqual([50]);
    expect(d.ciLow).toHaveLength(4);
    expect(d.ciHigh[0]).toEqual({ x: Date.UTC(2026, 0, 1, 0, 0), y: 110.00000000000001 });
    expect(d.changes).toEqual([{ x: Date.UTC(2026, 0, 1, 0, 3), label: 'regression' }]);
  });

  it('puts a drop threshold that many % below the median of the newest valid points, in the worse direction', () => {
    const s = series();
    const [below, drop] = s.thresholds;
    expect(thresholdY(below!, s)).toBe(90);
    expect(thresholdY(drop!, s)).toBeCloseTo(90.5 * 0.9); // the median of 80, 81, 100, 102
    expect(thresholdY(drop!, series({ lower_is_better: true }))).toBeCloseTo(90.5 * 1.1);
    expect(thresholdY(drop!, series({ points: [point(2, 50, false)] }))).toBeNull();
    expect(trendChart(series()).thresholds.map((t) => t.label)[0]).toBe('below 90 GFLOP/s');
  });
});
