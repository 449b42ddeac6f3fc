import { describe, expect, it } from 'vitest';
import { resultRow, run } from '../../../test/fixtures';
import { EXPORT_PAGE, HISTORY_COLUMNS, fetchAllRuns, historyCsv, historyJson } from './export';

const disturbed = { kind: 'disturbed' as const, severity: 'caution' as const, text: 'disturbed: CPU share 0.70 in repeat 1' };

describe('History export', () => {
  it('fetches every page of the filtered list, by keyset', async () => {
    const all = Array.from({ length: EXPORT_PAGE + 3 }, (_, i) => run({ id: EXPORT_PAGE + 3 - i })); // newest first
    const seen: unknown[] = [];
    const got = await fetchAllRuns({ host_id: 4, offset: 50 }, async (q) => {
      seen.push(q);
      const rest = all.filter((r) => q.before_id === undefined || q.before_id === null || r.id < q.before_id);
      const data = rest.slice(0, q.limit ?? 50);
      return { data, count: all.length, count_more: false, next_before_id: rest.length > data.length ? (data.at(-1)?.id ?? null) : null };
    });
    expect(got.map((r) => r.id)).toEqual(all.map((r) => r.id));
    expect(seen).toEqual([{ host_id: 4, limit: EXPORT_PAGE }, { host_id: 4, limit: EXPORT_PAGE, before_id: 4 }]);
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
