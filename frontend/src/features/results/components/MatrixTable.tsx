// One operation's matrix as a table: a row per thread count, a column per block size (or one
// column when the operation has none). Each cell: the backend's mean ± stddev with its unit, the
// efficiency / validity / reference badges, the headline extras (IOPS, latency percentiles, loss),
// min, max and CI on hover (title) and in a <details> that keyboard and screen-reader users open.
// This table is also the text alternative of the bar charts beside it.
import { Fragment } from 'react';
import { EfficiencyBadge, ReferenceBadges, VerdictBadge } from '../../../components/ResultBadges';
import type { ResultRow } from '../../../lib/api/types';
import { decimalsFor, formatFixed, formatMeanSd, formatNumber } from '../../../lib/format';
import { findCell, hasBlocks, opLabel, type OpMatrix } from '../../../lib/matrix';
import { referenceLine } from '../../../lib/references';
import { FIELD_AXES, axisTitle, countWords, type Axes } from '../../../lib/axes';
import { extraKeys, extraMeta, formatBlockSize, formatExtra } from '../../../lib/units';

export function meanStddev(row: Pick<ResultRow, 'mean' | 'stddev' | 'n'>): string {
  return formatMeanSd(row.mean, row.stddev, row.n, decimalsFor(row.mean));
}

export function spreadTitle(row: ResultRow): string {
  const ci = row.ci95_low !== null && row.ci95_high !== null ? `; 95 % CI ${formatNumber(row.ci95_low)} – ${formatNumber(row.ci95_high)}` : '';
  return `min ${formatNumber(row.min)}, max ${formatNumber(row.max)}, median ${formatNumber(row.median)}${ci} ${row.unit} (n = ${row.n})`;
}

/** The 95 % CI, or why there is none: one repeat, or a spread so wide the interval would reach below zero
 * for a figure that cannot be negative (the backend then gives none; app/results/stats.py). */
export function ciText(row: Pick<ResultRow, 'ci95_low' | 'ci95_high' | 'n'>, d: number): string {
  if (row.ci95_low !== null && row.ci95_high !== null) return `${formatFixed(row.ci95_low, d)} – ${formatFixed(row.ci95_high, d)}`;
  return row.n > 1 ? '— (spread too wide: a 95 % interval would reach below zero)' : '— (one repeat)';
}

function CellDetails({ row, axes }: { row: ResultRow; axes: Axes }) {
  const keys = extraKeys([row]);
  const d = decimalsFor(row.mean);
  return (
    <details className="cell-details">
      <summary>
        details<span className="visually-hidden"> for {countWords(axes, row.threads)}{row.block_bytes !== null && row.block_bytes !== undefined ? `, ${formatBlockSize(row.block_bytes)}` : ''}</span>
      </summary>
      <dl className="facts facts-compact">
        <dt>Min</dt>
        <dd>{formatFixed(row.min, d)}</dd>
        <dt>Max</dt>
        <dd>{formatFixed(row.max, d)}</dd>
        <dt>Median</dt>
        <dd>{formatFixed(row.median, d)}</dd>
        <dt>95 % CI</dt>
        <dd>{ciText(row, d)}</dd>
        <dt>CV</dt>
        <dd>{row.cv !== null ? `${formatNumber(row.cv * 100, 3)} %` : '—'}</dd>
        <dt>Repeats</dt>
        <dd>
          {row.n}: {row.values.map((v) => formatFixed(v, d)).join(', ')}
          {row.outliers.length ? <span className="muted"> (outliers: repeat {row.outliers.map((i) => i + 1).join(', ')})</span> : null}
          {row.stopped_by === 'stable' ? <span className="muted"> (stopped when the CV target was met)</span> : null}
          {row.stopped_by === 'max_repeats' ? <span className="text-bad"> (stopped at the repeat cap before the CV target was met)</span> : null}
        </dd>
        <dt>Peak</dt>
        <dd>{row.peak ? `${formatNumber(row.peak.value)} ${row.peak.unit} = ${row.peak.formula} (${row.peak.source})` : 'unknown'}</dd>
        {keys.map((k) => (
          <Fragment key={k}>
            <dt>{extraMeta(k, row).label}</dt>
            <dd>{formatExtra(k, row.extra?.[k], row)}</dd>
          </Fragment>
        ))}
        {row.references?.length ? (
          <>
            <dt>References</dt>
            <dd>
              <ul className="reference-list">
                {row.references.map((r, i) => (
                  <li key={i}>
                    {referenceLine(r)}
                    {r.argv.length ? <code className="small"> {r.argv.join(' ')}</code> : null}
                  </li>
                ))}
              </ul>
            </dd>
          </>
        ) : null}
      </dl>
    </details>
  );
}

function cellClass(row: ResultRow): string {
  const v = row.verdict ?? (row.valid ? 'valid' : 'invalid');
  return v === 'invalid' || !row.valid ? ' cell-invalid' : v === 'valid' ? '' : ' cell-caution';
}

export function MatrixCell({ row, peakNote, axes = FIELD_AXES }: { row: ResultRow | undefined; peakNote?: string | null; axes?: Axes }) {
  if (!row) return <td className="num muted">not measured</td>;
  const headline = extraKeys([row]).filter((k) => extraMeta(k, row).primary);
  return (
    <td className={`matrix-cell${cellClass(row)}`} data-verdict={row.verdict ?? 'valid'}>
      <span className="figure" title={spreadTitle(row)}>
        <strong className="num">{meanStddev(row)}</strong> <span className="unit">{row.unit}</span>
      </span>
      <span className="badges">
        <EfficiencyBadge row={row} peakNote={peakNote} />
        {row.level ? (
          <span className="badge badge-info" title={`The working set fits in ${row.level === 'DRAM' ? 'no cache: it comes from DRAM' : row.level}`}>
            {row.level}
          </span>
        ) : null}
        <VerdictBadge verdict={row.valid ? row.verdict : 'invalid'} flags={row.flags} showReasons={false} />
        {row.stopped_by === 'max_repeats' ? (
          <span className="badge badge-warn" title="Repeat until stable hit max_repeats before the CV target: the spread is larger than asked for">
            not stable
          </span>
        ) : null}
        <ReferenceBadges row={row} />
      </span>
      {headline.length ? (
        <span className="extras small">
          {headline.map((k) => (
            <span key={k}>
              {extraMeta(k, row).label} {formatExtra(k, row.extra?.[k], row)}
            </span>
          ))}
        </span>
      ) : null}
      {row.flags?.length ? (
        <span className="verdict-reasons">
          {row.flags.map((f, i) => (
            <span key={i} className={`verdict-reason ${f.severity === 'invalid' ? 'text-bad' : 'text-warn'}`}>
              {f.text}
            </span>
          ))}
        </span>
      ) : !row.valid && row.invalid_reason ? (
        <span className="invalid-reason">{row.invalid_reason}</span>
      ) : null}
      <CellDetails row={row} axes={axes} />
    </td>
  );
}

/** `axes`: what the rows' threads and block sizes are (lib/axes.ts): streams and message sizes for network. */
export function MatrixTable({ matrix, peakNote, axes = FIELD_AXES }: { matrix: OpMatrix; peakNote?: string | null; axes?: Axes }) {
  const blocks = hasBlocks(matrix);
  return (
    <div className="table-scroll">
      <table className="table matrix-table">
        <caption>
          {opLabel(matrix.op)}: {axes.counts}
          {blocks ? ` × ${axes.size}` : ''} → mean ± stddev over repeats ({matrix.unit})
        </caption>
        <thead>
          <tr>
            <th scope="col">{axisTitle(axes.counts)}</th>
            {blocks ? (
              matrix.blocks.map((b) => (
                <th scope="col" key={String(b)}>
                  {formatBlockSize(b)}
                </th>
              ))
            ) : (
              <th scope="col">Mean ± stddev</th>
            )}
          </tr>
        </thead>
        <tbody>
          {matrix.threads.map((t) => (
            <tr key={t}>
              <th scope="row" className="num">
                {t}
              </th>
              {matrix.blocks.map((b) => (
                <MatrixCell key={String(b)} row={findCell(matrix, b, t)} peakNote={peakNote} axes={axes} />
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
