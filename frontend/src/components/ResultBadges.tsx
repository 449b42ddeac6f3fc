// Badges that sit next to every figure: efficiency against the theoretical peak, validity, and the
// ratio to each reference tool. All three come from the backend's result row; nothing is recomputed.
import { referenceToolLabels } from '../config/experiments';
import type { ResultRow } from '../lib/api/types';
import { formatNumber, formatPercent } from '../lib/format';

type Row = Pick<ResultRow, 'efficiency' | 'peak' | 'valid' | 'invalid_reason'> & { references?: ResultRow['references'] };

export function EfficiencyBadge({ row, peakNote }: { row: Row; peakNote?: string | null }) {
  if (row.efficiency === null || row.efficiency === undefined) {
    return (
      <span className="badge badge-muted" title={peakNote ?? 'No theoretical peak known for this figure'}>
        peak n/a
      </span>
    );
  }
  const peak = row.peak;
  const title = peak ? `Theoretical peak ${formatNumber(peak.value)} ${peak.unit} = ${peak.formula} (${peak.source})` : undefined;
  return (
    <span className={`badge ${row.efficiency > 1 ? 'badge-bad' : 'badge-info'}`} title={title}>
      {formatPercent(row.efficiency)} of peak
    </span>
  );
}

export function ValidityBadge({ row, showReason = true }: { row: Row; showReason?: boolean }) {
  if (row.valid) return <span className="badge badge-ok">valid</span>;
  return (
    <span className="validity-invalid">
      <span className="badge badge-bad" title={row.invalid_reason ?? undefined}>
        invalid
      </span>
      {showReason && row.invalid_reason ? <span className="invalid-reason"> {row.invalid_reason}</span> : null}
    </span>
  );
}

export function ReferenceBadges({ row }: { row: Row }) {
  const refs = row.references ?? [];
  if (!refs.length) return null;
  return (
    <>
      {refs.map((r, i) => {
        const name = referenceToolLabels[r.tool] ?? r.tool;
        if (r.status === 'ok' && r.ratio !== null && r.ratio !== undefined) {
          const theirs = r.value !== null && r.value !== undefined ? `${formatNumber(r.value)} ${r.unit ?? ''}`.trim() : '—';
          return (
            <span
              key={`${r.tool}-${i}`}
              className={`badge ${r.ratio >= 1 ? 'badge-ok' : 'badge-warn'}`}
              title={`${name}${r.metric ? ` ${r.metric}` : ''}: ${theirs}; ours / theirs = ${formatNumber(r.ratio, 3)}`}
            >
              {formatNumber(r.ratio, 3)}× {name}
            </span>
          );
        }
        return (
          <span key={`${r.tool}-${i}`} className={`badge ${r.status === 'failed' ? 'badge-warn' : 'badge-muted'}`} title={r.reason ?? undefined}>
            {name} {r.status === 'failed' ? 'failed' : 'n/a'}
          </span>
        );
      })}
    </>
  );
}
