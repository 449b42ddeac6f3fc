import { describe, expect, it } from 'vitest';
import { resultRow, run } from '../../../test/fixtures';
import { EXPORT_PAGE, HISTORY_COLUMNS, fetchAllRuns, historyCsv, historyJson } from './export';

const disturbed = { kind: 'disturbed' as const, severity: 'caution' as const, text: 'disturbed: CPU share 0.70 in repeat 1' };

describe('History export', () => {
  it('fetches every page of the filtered list', async () => {
    const all = Array.from({ length: EXPORT_PAGE + 3 }, (_, i) => run({ id: i + 1 }));
    const seen: unknown[] = [];
    const got = await fetchAllRuns({ host_id: 4 }, async (q) => {
      seen.push(q);
      const o = q.offset ?? 0;
      return { data: all.slice(o, o + (q.limit ?? 50)), count: all.length };
    });
    expect(got).toHaveLength(EXPORT_PAGE + 3);
    expect(seen).toEqual([{ host_id: 4, limit: EXPORT_PAGE, offset: 0 }, { host_id: 4, limit: EXPORT_PAGE, offset: EXPORT_PAGE }]);
  });

  it('writes one CSV line per run with its verdict and reasons', () => {
    const r = run({ id: 9, status: 'succeeded', result: { verdict: 'disturbed', flags: [], unit: 'GFLOP/s', rows: [resultRow({ mean: 40, verdict: 'disturbed', flags: [disturbed] })] } });
    const lines = historyCsv([r, run({ id: 8 })]).trimEnd().split('\n');
    expect(lines[0]).toBe(HISTORY_COLUMNS.join(','));
    expect(lines[1]).toMatch(/^9,3,bench-a,cpu,succeeded,disturbed,disturbed: CPU share 0.70 in repeat 1,best 40 GFLOP\/s \(disturbed\),GFLOP\/s,/);
    expect(lines[2]).toMatch(/^8,3,bench-a,cpu,running,,,—,/);
    const doc = JSON.parse(historyJson([r], { host_id: 4, limit: 50, offset: 0 }));
    expect(doc).toMatchObject({ filters: { host_id: 4 }, count: 1, runs: [{ id: 9 }] });
  });
});
