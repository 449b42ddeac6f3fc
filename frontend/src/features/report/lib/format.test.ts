import { describe, expect, it } from 'vitest';
import { inventoryFacts, peakWords, readSelection, referenceWords, reportPath, verdictWords } from './format';

describe('report selection', () => {
  it('reads runs or job, never both, nothing malformed', () => {
    expect(readSelection('?runs=1,2,3')).toEqual({ runs: '1,2,3' });
    expect(readSelection('?job=7')).toEqual({ job: 7 });
    expect(readSelection('?suite=3')).toEqual({ suite: 3 });
    expect(readSelection('?runs=1&job=7')).toBeNull();
    expect(readSelection('?suite=3&job=7')).toBeNull();
    expect(readSelection('?suite=3x')).toBeNull();
    expect(readSelection('?runs=1;drop')).toBeNull();
    expect(readSelection('')).toBeNull();
    expect(reportPath({ runs: [4, 5] })).toBe('/report?runs=4,5');
    expect(reportPath({ job: 9 })).toBe('/report?job=9');
    expect(reportPath({ suite: 2 })).toBe('/report?suite=2');
  });
});

describe('report words', () => {
  it('never calls a flagged figure valid', () => {
    expect(verdictWords({ verdict: 'valid', flags: [] })).toBe('valid');
    const flag = { kind: 'disturbed' as const, severity: 'caution' as const, text: 'disturbed: CPU share 0.50' };
    expect(verdictWords({ verdict: 'disturbed', flags: [flag] })).toBe('caution: disturbed: CPU share 0.50');
    expect(verdictWords({ verdict: 'invalid', flags: [{ ...flag, kind: 'above_peak', severity: 'invalid', text: 'above the peak' }] })).toBe('invalid: above the peak');
  });

  it('gives the peak with its arithmetic and the reference with its name and figure', () => {
    expect(peakWords({ peak: { value: 233.6, unit: 'GFLOP/s', formula: '2 cores × 3.65 GHz × 32', source: 'computed' } })).toBe(
      '233.6 GFLOP/s = 2 cores × 3.65 GHz × 32 (computed)',
    );
    expect(peakWords({ peak: null }, 'link speed unknown')).toBe('no peak: link speed unknown');
    expect(referenceWords({ references: [{ tool: 'fio', status: 'ok', value: 1200, unit: 'MB/s', ratio: 0.95, argv: [] }] })).toBe('fio: 1,200 MB/s (ours / theirs 0.95)');
    expect(referenceWords({ references: [{ tool: 'iperf3', status: 'unavailable', reason: 'not installed', argv: [] }] })).toBe('iperf3: unavailable (not installed)');
    expect(referenceWords({ references: [] })).toBe('none run');
    expect(
      referenceWords({
        references: [
          { tool: 'none', status: 'none', reason: 'no reference tool measures latency', argv: [] },
          { tool: 'sockperf', status: 'ok', value: 40000, unit: 'RT/s', ratio: 0.9, note: 'sockperf at 14 B', argv: [] },
        ],
      }),
    ).toBe('no reference tool measures latency; sockperf: 40,000 RT/s (ours / theirs 0.9) [sockperf at 14 B]');
  });

  it('reads the inventory without guessing', () => {
    const facts = Object.fromEntries(inventoryFacts({ cpu: { model: 'EPYC', threads: 4, l3_bytes: 32 * 2 ** 20 }, memory: { total_bytes: 2 ** 34 } }));
    expect(facts.CPU).toBe('EPYC, 4 threads');
    expect(facts.Caches).toBe('L3 32 MiB');
    expect(facts.Memory).toBe('16 GiB');
    expect(facts.NICs).toBe('—');
  });
});
