import { describe, expect, it } from 'vitest';
import { resultRow, run } from '../../../test/fixtures';
import { ratioTable, readSelection, runLabel, unitsOf, writeSelection } from './compare';

const q = (s: string) => new URLSearchParams(s);

describe('compare selection in the URL', () => {
  it('reads distinct run ids in order (at most 10) and a baseline among them', () => {
    expect(readSelection(q('runs=3,1,2,1&baseline=1'))).toEqual({ ids: [3, 1, 2], baseline: 1 });
    expect(readSelection(q('runs=3,x,-1,2&baseline=9'))).toEqual({ ids: [3, 2], baseline: 3 });
    expect(readSelection(q('runs=' + Array.from({ length: 12 }, (_, i) => i + 1).join(','))).ids).toHaveLength(10);
    expect(readSelection(q(''))).toEqual({ ids: [], baseline: null });
  });

  it('writes the selection back, dropping a baseline that is not selected', () => {
    expect(writeSelection(q('x=1'), { ids: [4, 5], baseline: 5 }).toString()).toBe('x=1&runs=4%2C5&baseline=5');
    expect(writeSelection(q('runs=1&baseline=1'), { ids: [], baseline: 1 }).toString()).toBe('');
  });
});

describe('ratioTable', () => {
  const a = run({ id: 1, result: { verdict: 'valid', flags: [], unit: 'GFLOP/s', rows: [resultRow({ threads: 1, mean: 50 }), resultRow({ threads: 2, mean: 100 })] } });
  const b = run({ id: 2, host_name: 'bench-b', result: { verdict: 'valid', flags: [], unit: 'GFLOP/s', rows: [resultRow({ threads: 1, mean: 60 }), resultRow({ threads: 4, mean: 200 })] } });
  const c = run({ id: 3, result: { verdict: 'valid', flags: [], unit: 'GIOP/s', rows: [resultRow({ op: 'int32', unit: 'GIOP/s', threads: 1, mean: 70 })] } });

  it('divides each run by the baseline, cell by cell', () => {
    const t = ratioTable([a, b], 2);
    expect(t.baselineIndex).toBe(1);
    expect(t.lines.map((l) => l.label)).toEqual(['FP64 FLOPS · 1 thread', 'FP64 FLOPS · 2 threads', 'FP64 FLOPS · 4 threads']);
    const [one, two, four] = t.lines;
    expect(one?.byRun.map((c) => c.ratio)).toEqual([50 / 60, 1]);
    expect(two?.byRun.map((c) => c.row?.mean ?? null)).toEqual([100, null]);
    expect(two?.byRun.map((c) => c.ratio)).toEqual([null, null]); // the baseline did not measure it
    expect(four?.byRun.map((c) => c.ratio)).toEqual([null, 1]);
    expect(one?.unit).toBe('GFLOP/s');
    expect(one?.lowerIsBetter).toBe(false);
  });

  it('falls back to the first run as baseline and keeps units apart', () => {
    const t = ratioTable([a, c], null);
    expect(t.baselineIndex).toBe(0);
    expect(unitsOf(t)).toEqual(['GFLOP/s', 'GIOP/s']);
    expect(t.lines.find((l) => l.cell.op === 'int32')?.byRun.map((x) => x.ratio)).toEqual([null, null]);
  });

  it('marks latency cells as lower-is-better and never divides by a zero baseline', () => {
    const lat = (id: number, mean: number) => run({ id, result: { verdict: 'valid', flags: [], unit: 'ns', rows: [resultRow({ op: 'latency', unit: 'ns', block_bytes: 8192, mean })] } });
    const t = ratioTable([lat(1, 0), lat(2, 80)], 1);
    expect(t.lines[0]).toMatchObject({ label: 'Load latency · 8 KiB · 1 thread', lowerIsBetter: true });
    expect(t.lines[0]?.byRun.map((x) => x.ratio)).toEqual([null, null]);
  });

  it('labels runs by id, host and instance type', () => {
    expect(runLabel(b, 'c7i.large')).toBe('#2 bench-b (c7i.large)');
    expect(runLabel(a)).toBe('#7'.replace('7', '1') + ' bench-a');
  });
});
