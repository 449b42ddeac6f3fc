// The run's verdict up front: one word (valid / oversubscribed / disturbed / CPU lost / throttled /
// invalid) and every reason in words, each with the row it belongs to. All of it is the backend's
// (app/results/verdict.py); nothing is recomputed here.
import { verdictClass, verdictLabels, type Flag, type Verdict } from '../../../components/ResultBadges';
import type { RunResult } from '../../../lib/api/types';
import { FIELD_AXES, type AxesOf } from '../../../lib/axes';
import { opLabel, threadsLabel } from '../../../lib/matrix';
import { formatBlockSize } from '../../../lib/units';

export interface VerdictReason {
  where: string | null;
  flag: Flag;
}

/** Every flag of a result (the run's own, each row's, the trace's), each with where it applies (in the run's words:
 * "1 stream", lib/axes.ts). */
export function verdictReasons(result: RunResult, axes: AxesOf = () => FIELD_AXES): VerdictReason[] {
  const out: VerdictReason[] = (result.flags ?? []).map((flag) => ({ where: null, flag }));
  for (const row of result.rows) {
    const where = [
      row.op ? opLabel(row.op) : null,
      threadsLabel(row.threads, axes(row.op)),
      row.block_bytes !== null && row.block_bytes !== undefined ? formatBlockSize(row.block_bytes) : null,
    ]
      .filter(Boolean)
      .join(', ');
    for (const flag of row.flags ?? []) out.push({ where, flag });
  }
  for (const flag of result.trace?.flags ?? []) out.push({ where: 'trace', flag });
  return out;
}

/** What a valid verdict rests on: the checks the backend ran for this run (result.checked), and only those. */
export function checkedWords(result: Pick<RunResult, 'checked'>): string {
  const checked = result.checked ?? [];
  return checked.length ? `nothing is known against these figures; checked: ${checked.join('; ')}.` : 'nothing is known against these figures.';
}

/** What waiting for a quiet CPU and repeating disturbed phases cost the run, in words; null when it asked for neither. */
export function busyWords(busy: RunResult['busy']): string | null {
  if (!busy) return null;
  const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
  const parts = [`waited ${busy.waited_s.toFixed(1)} s for a quiet CPU over ${plural(busy.phases, 'phase')}`];
  if (busy.never_quiet) parts.push(`${busy.never_quiet} never quiet`);
  parts.push(`${plural(busy.tries, 'try', 'tries')}${busy.retried_phases ? ` (${plural(busy.retried_phases, 'phase')} measured again: disturbed)` : ''}`);
  return `Busy host: ${parts.join('; ')}.`;
}

export function RunVerdict({ result, axes }: { result: RunResult; axes?: AxesOf }) {
  const verdict: Verdict = result.verdict ?? 'valid';
  const reasons = verdictReasons(result, axes);
  const busy = busyWords(result.busy);
  const tone = verdict === 'valid' ? 'valid' : verdict === 'invalid' ? 'invalid' : 'caution';
  return (
    <section className={`run-verdict run-verdict-${tone}`} aria-label="Verdict" data-verdict={verdict}>
      <div>
        <strong>Verdict: </strong>
        <span className={`badge ${verdictClass(verdict)}`}>{verdictLabels[verdict]}</span>{' '}
        {verdict === 'valid' ? (
          <span className="small">{checkedWords(result)}</span>
        ) : null}
      </div>
      {busy ? <p className="small run-verdict-busy">{busy}</p> : null}
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
