// A comparison as a file, built from what the page loaded: one line per (run, cell) with the unit on
// every line, the backend's figures, and the ratio to the baseline. JSON carries the same, nested.
import { toCsv, type CsvValue } from '../../../lib/csv';
import type { RatioTable } from './compare';

export const COMPARISON_COLUMNS = [
  'run_id', 'host', 'experiment', 'baseline', 'op', 'block_bytes', 'threads', 'unit', 'n', 'mean', 'stddev', 'min', 'max',
  'ci95_low', 'ci95_high', 'efficiency', 'valid', 'invalid_reason', 'verdict', 'verdict_reasons', 'ratio_to_baseline',
] as const;

export function comparisonCsv(table: RatioTable): string {
  const baseline = table.runs[table.baselineIndex];
  const rows: CsvValue[][] = [
    ['# hostbench comparison', 'baseline run', baseline?.id ?? null, 'runs', table.runs.map((r) => r.id).join(' ')],
    [...COMPARISON_COLUMNS],
  ];
  table.runs.forEach((run, i) => {
    for (const line of table.lines) {
      const { row, ratio } = line.byRun[i] ?? { row: null, ratio: null };
      if (!row) continue;
      rows.push([
        run.id, run.host_name, run.experiment, i === table.baselineIndex, row.op, row.block_bytes ?? null, row.threads, row.unit,
        row.n, row.mean, row.stddev, row.min, row.max, row.ci95_low, row.ci95_high, row.efficiency, row.valid,
        row.invalid_reason, row.verdict ?? null, (row.flags ?? []).map((f) => f.text).join('; ') || null, ratio,
      ]);
    }
  });
  return toCsv(rows);
}

export function comparisonJson(table: RatioTable): string {
  const baseline = table.runs[table.baselineIndex];
  const doc = {
    baseline_run_id: baseline?.id ?? null,
    runs: table.runs.map((r) => ({ id: r.id, host_id: r.host_id, host_name: r.host_name, experiment: r.experiment, params: r.params, status: r.status, unit: r.unit, trace: r.result?.trace ?? null })),
    cells: table.lines.map((l) => ({
      op: l.cell.op,
      block_bytes: l.cell.block_bytes ?? null,
      threads: l.cell.threads,
      unit: l.unit,
      lower_is_better: l.lowerIsBetter,
      runs: table.runs.map((r, i) => {
        const c = l.byRun[i];
        const row = c?.row;
        return row
          ? { run_id: r.id, n: row.n, mean: row.mean, stddev: row.stddev, min: row.min, max: row.max, ci95_low: row.ci95_low, ci95_high: row.ci95_high, efficiency: row.efficiency, valid: row.valid, invalid_reason: row.invalid_reason, ratio_to_baseline: c?.ratio ?? null }
          : { run_id: r.id, missing: true };
      }),
    })),
  };
  return JSON.stringify(doc, null, 1);
}
