import { describe, expect, it } from 'vitest';
import { resultRow, run } from '../../../test/fixtures';
import { ratioTable } from './compare';
import { COMPARISON_COLUMNS, comparisonCsv, comparisonJson } from './export';

const a = run({ id: 1, result: { verdict: 'valid', flags: [], unit: 'GFLOP/s', rows: [resultRow({ threads: 1, mean: 50, stddev: 0.5 })] } });
const b = run({ id: 2, host_name: 'bench, b', result: { verdict: 'valid', flags: [], unit: 'GFLOP/s', rows: [resultRow({ threads: 1, mean: 60, stddev: 0.6, valid: false, invalid_reason: 'above "peak"' })] } });

describe('comparison export', () => {
  it('writes CSV: a comment line, the header, one line per run and cell with unit and ratio', () => {
    const lines = comparisonCsv(ratioTable([a, b], 2)).trimEnd().split('\n');
    expect(lines[0]).toBe('# hostbench comparison,baseline run,2,runs,1 2');
    expect(lines[1]).toBe(COMPARISON_COLUMNS.join(','));
    expect(lines[1]).toContain(',unit,');
    expect(lines[2]).toBe('1,bench-a,cpu,false,fp64,,1,GFLOP/s,3,50,0.5,51.9,52.8,51.2,53.5,0.8842,true,,valid,,0.8333333333333334');
    expect(lines[3]).toBe('2,"bench, b",cpu,true,fp64,,1,GFLOP/s,3,60,0.6,51.9,52.8,51.2,53.5,0.8842,false,"above ""peak""",valid,,1');
  });

  it('writes JSON with the baseline, the runs and each cell per run', () => {
    const doc = JSON.parse(comparisonJson(ratioTable([a, b], 1)));
    expect(doc.baseline_run_id).toBe(1);
    expect(doc.runs.map((r: { id: number }) => r.id)).toEqual([1, 2]);
    expect(doc.cells[0]).toMatchObject({ op: 'fp64', threads: 1, unit: 'GFLOP/s', lower_is_better: false });
    expect(doc.cells[0].runs[1]).toMatchObject({ run_id: 2, mean: 60, ratio_to_baseline: 1.2, valid: false });
  });
});
