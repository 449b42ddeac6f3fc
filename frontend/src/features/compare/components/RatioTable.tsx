// Every compared cell against the baseline run: each run's mean ± stddev (with unit and the
// backend's badges) and its ratio to the baseline's mean. The table is also the bars' text form.
import { EfficiencyBadge, VerdictBadge } from '../../../components/ResultBadges';
import { decimalsFor, formatMeanSd, formatNumber } from '../../../lib/format';
import type { RatioTable as Table } from '../lib/compare';

const RATIO = new Intl.NumberFormat('en-US', { minimumSignificantDigits: 3, maximumSignificantDigits: 3 });

/** Always three significant digits, so 0.9996 reads "1.00×", never a bare "1×". */
export function formatRatio(ratio: number | null): string {
  return ratio === null || !Number.isFinite(ratio) ? '—' : `${RATIO.format(ratio)}×`;
}

export function RatioTable({ table, runLabels }: { table: Table; runLabels: string[] }) {
  const baseline = table.runs[table.baselineIndex];
  const anyLower = table.lines.some((l) => l.lowerIsBetter);
  return (
    <div className="table-scroll">
      <table className="table ratio-table">
        <caption>
          Ratio to baseline run #{baseline?.id}: each run&apos;s mean ÷ the baseline&apos;s mean for the same cell (above 1× = more
          {anyLower ? '; for latencies, above 1× = slower' : ''})
        </caption>
        <thead>
          <tr>
            <th scope="col">Cell</th>
            {table.runs.map((r, i) => (
              <th scope="col" key={r.id}>
                {runLabels[i]}
                {i === table.baselineIndex ? (
                  <>
                    {' '}
                    <span className="badge badge-info">baseline</span>
                  </>
                ) : null}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {table.lines.map((line) => (
            <tr key={line.key}>
              <th scope="row">
                {line.label} <span className="muted small">({line.unit})</span>
              </th>
              {line.byRun.map(({ row, ratio }, i) => {
                const runId = table.runs[i]?.id;
                if (!row) {
                  return (
                    <td key={runId} className="muted">
                      not measured
                    </td>
                  );
                }
                const d = decimalsFor(row.mean);
                return (
                  <td key={runId} className={row.valid ? undefined : 'cell-invalid'}>
                    <span className="ratio" data-ratio={ratio ?? ''}>
                      {i === table.baselineIndex ? `${formatRatio(1)} (baseline)` : formatRatio(ratio)}
                    </span>
                    <span className="block small tabular" title={`min ${formatNumber(row.min)}, max ${formatNumber(row.max)} ${row.unit}`}>
                      {formatMeanSd(row.mean, row.stddev, row.n, d)} {row.unit}
                    </span>
                    <span className="badges">
                      <EfficiencyBadge row={row} />
                      {/* the row's verdict (oversubscribed, disturbed, … never a plain "valid" for those);
                          its reasons in the tooltip, the table stays one figure per cell */}
                      <VerdictBadge
                        verdict={row.valid ? (row.verdict ?? 'valid') : 'invalid'}
                        flags={row.flags}
                        reason={row.invalid_reason}
                        showReasons={false}
                      />
                    </span>
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
