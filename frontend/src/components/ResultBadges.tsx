// Badges that sit next to every figure: efficiency against the theoretical peak, the verdict, and the
// ratio to each reference tool. All three come from the backend's result row; nothing is recomputed.
import type { ResultRow } from '../lib/api/types';
import { formatNumber, formatPercent } from '../lib/format';
import { referenceName, referenceValue, referenceWhyNot } from '../lib/references';

type Row = Pick<ResultRow, 'efficiency' | 'peak' | 'valid' | 'invalid_reason'> & { references?: ResultRow['references'] };
export type Verdict = NonNullable<ResultRow['verdict']>;
export type Flag = NonNullable<ResultRow['flags']>[number];

/** The backend's verdict (app/results/verdict.py) in one word, and its badge colour. */
export const verdictLabels: Record<Verdict, string> = {
  valid: 'valid',
  oversubscribed: 'oversubscribed',
  disturbed: 'disturbed',
  cpu_bound: 'CPU-bound (quota)',
  cpu_lost: 'CPU lost',
  throttled: 'throttled',
  unstable: 'unstable',
  lossy: 'lossy',
  same_machine: 'same machine',
  page_cache: 'page cache',
  loopback: 'loopback',
  invalid: 'invalid',
};

export function verdictClass(verdict: Verdict): string {
  return verdict === 'valid' ? 'badge-ok' : verdict === 'invalid' ? 'badge-bad' : 'badge-warn';
}

/**
 * The verdict first, then every reason in words (visible, not only in a tooltip): a disturbed or
 * oversubscribed figure is never shown as plainly "valid".
 */
export function VerdictBadge({
  verdict,
  flags,
  showReasons = true,
  reason,
}: {
  verdict: Verdict | undefined;
  flags?: Flag[] | null;
  showReasons?: boolean;
  /** words for the tooltip when no flag says why (a row's invalid_reason) */
  reason?: string | null;
}) {
  const v: Verdict = verdict ?? 'valid';
  const reasons = flags ?? [];
  return (
    <span className={`verdict verdict-${v}`} data-verdict={v}>
      <span className={`badge ${verdictClass(v)}`} title={reasons.map((f) => f.text).join('\n') || reason || undefined}>
        {verdictLabels[v]}
      </span>
      {showReasons && reasons.length ? (
        <span className="verdict-reasons">
          {reasons.map((f, i) => (
            <span key={i} className={`verdict-reason ${f.severity === 'invalid' ? 'text-bad' : 'text-warn'}`}>
              {f.text}
            </span>
          ))}
        </span>
      ) : null}
    </span>
  );
}

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

/** Why a ratio above 1 against a reference is not a bug, in words shown next to it (tool → text). The
 * measured ratios and what matching the settings gives: docs/methodology/network.md. */
export const aboveReferenceWhy: Record<string, string> = {
  iperf3:
    'why ours can exceed iperf3: iperf3 reads -l bytes per read() (at 1 B, one system call per byte received) where our receiver ' +
    'takes up to 256 KiB per wakeup (SO_RCVLOWAT) on TCP; on UDP ours takes a 4 MiB receive queue where iperf3 keeps the OS ' +
    'default and so loses more datagrams (with 4 MiB buffers on both the UDP ratio was 1.03)',
};

/** The reference tools of a row in the order a person should read them: like-for-like first, ping
 * (an ICMP echo answered by the kernel, no socket of ours) last and named as context. */
export function orderedReferences<T extends { tool: string }>(refs: readonly T[]): T[] {
  const rank = (t: string) => (t === 'ping' ? 1 : 0);
  return [...refs].sort((a, b) => rank(a.tool) - rank(b.tool));
}

export function ReferenceBadges({ row }: { row: Row }) {
  const refs = orderedReferences(row.references ?? []);
  if (!refs.length) return null;
  return (
    <>
      {refs.map((r, i) => {
        const name = referenceName(r.tool);
        const theirs = referenceValue(r);
        // the tool's own figure and its note are in the row's text, not only a tooltip (issue 26)
        const note = r.note ? <span className="small muted reference-note"> {r.note}</span> : null;
        if (theirs !== null && r.ratio !== null && r.ratio !== undefined) {
          return (
            <span key={`${r.tool}-${i}`} className="reference">
              <span
                className={`badge ${r.tool === 'ping' ? 'badge-muted' : r.ratio >= 1 ? 'badge-ok' : 'badge-warn'}`}
                title={`${name}${r.metric ? ` ${r.metric}` : ''}: ${theirs}; ours / theirs = ${formatNumber(r.ratio, 3)}`}
              >
                {formatNumber(r.ratio, 3)}× {name} ({theirs})
                {r.tool === 'ping' ? ' (ICMP, context only)' : ''}
              </span>
              {note}
              {r.ratio > 1.05 && aboveReferenceWhy[r.tool] ? <span className="small muted reference-why"> {aboveReferenceWhy[r.tool]}</span> : null}
            </span>
          );
        }
        // The reason is part of the text, not only a tooltip (README: "unavailable on this host").
        return (
          <span key={`${r.tool}-${i}`} className="reference">
            <span className={`badge badge-wrap ${r.status === 'failed' ? 'badge-warn' : 'badge-muted'}`}>{referenceWhyNot(r)}</span>
            {note}
          </span>
        );
      })}
    </>
  );
}
