// The run's verdict up front: one word (valid / oversubscribed / disturbed / CPU lost / throttled /
// invalid) and every reason in words, each with the row it belongs to. All of it is the backend's
// (app/results/verdict.py); nothing is recomputed here.
import { verdictClass, verdictLabels, type Flag, type Verdict } from '../../../components/ResultBadges';
import type { RunResult } from '../../../lib/api/types';
import { opLabel, threadsLabel } from '../../../lib/matrix';
import { formatBlockSize } from '../../../lib/units';

export interface VerdictReason {
  where: string | null;
  flag: Flag;
}

/** Every flag of a result (the run's own, each row's, the trace's), each with where it applies. */
export function verdictReasons(result: RunResult): VerdictReason[] {
  const out: VerdictReason[] = (result.flags ?? []).map((flag) => ({ where: null, flag }));
  for (const row of result.rows) {
    const where = [
      row.op ? opLabel(row.op) : null,
      threadsLabel(row.threads),
      row.block_bytes !== null && row.block_bytes !== undefined ? formatBlockSize(row.block_bytes) : null,
    ]
      .filter(Boolean)
      .join(', ');
    for (const flag of row.flags ?? []) out.push({ where, flag });
  }
  for (const flag of result.trace?.flags ?? []) out.push({ where: 'trace', flag });
  return out;
}

export function RunVerdict({ result }: { result: RunResult }) {
  const verdict: Verdict = result.verdict ?? 'valid';
  const reasons = verdictReasons(result);
  const tone = verdict === 'valid' ? 'valid' : verdict === 'invalid' ? 'invalid' : 'caution';
  return (
    <section className={`run-verdict run-verdict-${tone}`} aria-label="Verdict" data-verdict={verdict}>
      <div>
        <strong>Verdict: </strong>
        <span className={`badge ${verdictClass(verdict)}`}>{verdictLabels[verdict]}</span>{' '}
        {verdict === 'valid' ? (
          <span className="small">nothing is known against these figures: threads ≤ CPUs, the kernel kept its CPUs, verified, within the peak.</span>
        ) : null}
      </div>
      {reasons.length ? (
        <ul className="small">
          {reasons.map((r, i) => (
            <li key={i} className={r.flag.severity === 'invalid' ? 'text-bad' : 'text-warn'}>
              {r.where ? <strong>{r.where}: </strong> : null}
              {r.flag.text}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
