// Side-by-side bars: one group per matrix cell, one bar per run, whiskers ± stddev; one chart per
// unit (GFLOP/s and GIOP/s are not drawn on one axis).
import { useMemo } from 'react';
import { GroupedBarChart, type BarSeries } from '../../../components/chart/GroupedBarChart';
import { stddevBar } from '../../../components/chart/plugins/error-bars';
import { formatNumber, formatPercent } from '../../../lib/format';
import type { Theme } from '../../../lib/theme';
import { unitsOf, type RatioTable } from '../lib/compare';
import { formatRatio } from './RatioTable';

export function compareSeries(table: RatioTable, unit: string, runLabels: string[]): { categories: string[]; series: BarSeries[] } {
  const lines = table.lines.filter((l) => l.unit === unit);
  return {
    categories: lines.map((l) => l.label),
    series: table.runs.map((run, i) => {
      const cells = lines.map((l) => l.byRun[i]);
      return {
        label: runLabels[i] ?? `#${run.id}`,
        values: cells.map((c) => c?.row?.mean ?? null),
        errors: cells.map((c) => (c?.row ? stddevBar(c.row.mean, c.row.stddev) : null)),
        invalid: cells.map((c) => (c?.row ? !c.row.valid : false)),
        notes: cells.map((c) =>
          c?.row
            ? [
                `ratio to baseline ${formatRatio(c.ratio)}`,
                `min ${formatNumber(c.row.min)} · max ${formatNumber(c.row.max)} · n ${c.row.n}`,
                ...(c.row.efficiency !== null ? [`${formatPercent(c.row.efficiency)} of peak`] : []),
              ]
            : null,
        ),
      };
    }),
  };
}

function UnitBars({ table, unit, runLabels, theme }: { table: RatioTable; unit: string; runLabels: string[]; theme: Theme }) {
  const { categories, series } = useMemo(() => compareSeries(table, unit, runLabels), [table, unit, runLabels]);
  return (
    <GroupedBarChart
      title={`Side by side (${unit})`}
      subtitle="mean per run, whiskers ± stddev"
      categories={categories}
      series={series}
      unit={unit}
      theme={theme}
      fileName={`hostbench-compare-${unit.replace(/[^a-z0-9]+/gi, '-')}.png`}
    />
  );
}

export function CompareBars({ table, runLabels, theme }: { table: RatioTable; runLabels: string[]; theme: Theme }) {
  return (
    <div className="chart-grid">
      {unitsOf(table).map((unit) => (
        <UnitBars key={unit} table={table} unit={unit} runLabels={runLabels} theme={theme} />
      ))}
    </div>
  );
}
