// Results as the backend computed them: mean ± stddev over repeats, min, max, n, peak, efficiency
// and validity. Nothing is recomputed here. The table is also the live chart's text alternative.
import type { ResultRow, RunResult } from '../../../lib/api/types';
import { decimalsFor, formatFixed, formatNumber, formatPercent } from '../../../lib/format';
import { enumLabels } from '../../../config/experiments';

function Validity({ row }: { row: ResultRow }) {
  if (row.valid) return <span className="badge badge-ok">valid</span>;
  return (
    <span className="validity-invalid">
      <span className="badge badge-bad">invalid</span>
      {row.invalid_reason ? <span className="invalid-reason"> {row.invalid_reason}</span> : null}
    </span>
  );
}

export function ResultsTable({ result }: { result: RunResult }) {
  const rows = result.rows;
  if (rows.length === 0) return <p className="state state-empty">The run finished without result rows.</p>;
  return (
    <div className="table-scroll">
      <table className="table results-table">
        <caption>
          Thread count → mean ± stddev over repeats ({result.unit})
        </caption>
        <thead>
          <tr>
            <th scope="col">Op</th>
            <th scope="col">Threads</th>
            <th scope="col">Mean ± stddev</th>
            <th scope="col">Min</th>
            <th scope="col">Max</th>
            <th scope="col">n</th>
            <th scope="col">Unit</th>
            <th scope="col">Peak</th>
            <th scope="col">Efficiency</th>
            <th scope="col">Validity</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => {
            const d = decimalsFor(r.mean, r.max);
            return (
              <tr key={`${r.op ?? ''}-${r.threads}-${(r as { block_bytes?: number | null }).block_bytes ?? ''}`} className={r.valid ? undefined : 'row-invalid'}>
                <td>{r.op ? (enumLabels.op?.[r.op] ?? r.op) : '—'}</td>
                <th scope="row">{r.threads}</th>
                <td className="num">
                  {formatFixed(r.mean, d)} ± {formatFixed(r.stddev, d)}
                </td>
                <td className="num">{formatFixed(r.min, d)}</td>
                <td className="num">{formatFixed(r.max, d)}</td>
                <td className="num">{r.n}</td>
                <td>{r.unit}</td>
                <td className="num">
                  {r.peak ? (
                    <span title={r.peak.formula}>
                      {formatNumber(r.peak.value)} {r.peak.unit}
                    </span>
                  ) : (
                    '—'
                  )}
                </td>
                <td className="num">{formatPercent(r.efficiency)}</td>
                <td>
                  <Validity row={r} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {(result as { peak_note?: string | null }).peak_note ? (
        <p className="muted small">{(result as { peak_note?: string | null }).peak_note}</p>
      ) : null}
    </div>
  );
}
