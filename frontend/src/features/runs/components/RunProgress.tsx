// Progress comes from the server (RunPublic.progress); time left is the run's usual duration (the server's
// estimate, typical_duration_s; its cap beside it) less the time elapsed since the run started, ticking locally
// between server updates. The runner's phase (the kernel, or reference tool i of n) is said under it.
import { useEffect, useState } from 'react';
import type { RunPhase, RunPublic } from '../../../lib/api/types';
import { isActive } from '../../../lib/api/types';
import { formatDuration } from '../../../lib/format';

/** What the run usually takes (the server's estimate), else its cap. */
export function usualDuration(run: Pick<RunPublic, 'expected_duration_s' | 'typical_duration_s'>): number {
  return run.typical_duration_s ?? run.expected_duration_s;
}

export function timeLeft(
  run: Pick<RunPublic, 'status' | 'started_at' | 'expected_duration_s' | 'typical_duration_s' | 'progress'>,
  now: number,
): number | null {
  if (!isActive(run.status)) return 0;
  const expected = usualDuration(run);
  if (!Number.isFinite(expected)) return null;
  const started = run.started_at ? Date.parse(run.started_at) : NaN;
  if (Number.isNaN(started)) return expected * (1 - clamp01(run.progress));
  const byClock = expected - (now - started) / 1000;
  const byProgress = expected * (1 - clamp01(run.progress));
  // The server's progress wins when the local clock disagrees with it by more than a few seconds.
  return Math.max(0, Math.abs(byClock - byProgress) > 5 && run.progress > 0 ? byProgress : byClock);
}

/** The cap beside the estimate, when the server gave both (the run stops at its deadline, past the cap). */
function capText(run: Pick<RunPublic, 'expected_duration_s' | 'typical_duration_s'>): string {
  return run.typical_duration_s !== null && run.typical_duration_s !== undefined ? `, cap ${formatDuration(run.expected_duration_s)}` : '';
}

function clamp01(v: number): number {
  return Math.min(1, Math.max(0, Number.isFinite(v) ? v : 0));
}

/** The runner's current phase in words: the kernel measuring, or which reference tool runs, what it runs and
 * about how long it has left by its usual time (past that: its cap). Null when the runner reported none. */
export function phaseText(phase: RunPhase | null | undefined, now: number): string | null {
  if (!phase) return null;
  if (phase.kind === 'kernel') return `${phase.what || 'the kernel'}: measuring`;
  const which = phase.index && phase.of ? ` (reference ${phase.index} of ${phase.of})` : '';
  const ran = Math.max(0, now / 1000 - phase.started_at);
  let when = `running for ${formatDuration(ran)}`;
  if (phase.typical_s) {
    const left = phase.typical_s - ran;
    when = left > 0 ? `about ${formatDuration(left)} left` : `past its usual ${formatDuration(phase.typical_s)}`;
  }
  const cap = phase.cap_s ? `; stopped at ${formatDuration(phase.cap_s)}` : '';
  return `${phase.tool ?? 'reference tool'} running${which}${phase.what ? `: ${phase.what}` : ''} · ${when}${cap}`;
}

/** For a failed or cancelled run: how far it got (its running time over the expected), in words. */
export function stoppedAt(run: Pick<RunPublic, 'status' | 'started_at' | 'finished_at' | 'expected_duration_s'>): { fraction: number; text: string } | null {
  if (run.status !== 'failed' && run.status !== 'cancelled') return null;
  const started = run.started_at ? Date.parse(run.started_at) : NaN;
  const finished = run.finished_at ? Date.parse(run.finished_at) : NaN;
  if (Number.isNaN(started)) return { fraction: 0, text: `${run.status} before it started` };
  if (Number.isNaN(finished)) return { fraction: 0, text: run.status };
  const ran = Math.max(0, (finished - started) / 1000);
  const expected = run.expected_duration_s;
  const fraction = expected > 0 ? clamp01(ran / expected) : 0;
  return {
    fraction,
    text: `${run.status} after ${formatDuration(ran)} of an expected ${formatDuration(expected)} (about ${Math.round(Math.min(0.99, fraction) * 100)} %)`,
  };
}

export function RunProgress({ run }: { run: RunPublic }) {
  const active = isActive(run.status);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [active]);

  const stopped = stoppedAt(run);
  const p = stopped ? stopped.fraction : clamp01(run.status === 'succeeded' || run.status === 'untrusted' ? 1 : run.progress);
  const left = timeLeft(run, now);
  const phase = phaseText(run.phase, now);
  const pct = Math.round(p * 100);
  if (stopped) {
    // A failed or cancelled run did not reach 100 %: how far it got by the clock, in words
    return (
      <div className="run-progress">
        <label htmlFor={`run-${run.id}-progress`} className="small">
          Progress
        </label>
        <progress id={`run-${run.id}-progress`} max={1} value={p} aria-valuetext={stopped.text}>
          {stopped.text}
        </progress>
        <span className="small text-bad">{stopped.text}</span>
      </div>
    );
  }
  return (
    <div className="run-progress">
      <label htmlFor={`run-${run.id}-progress`} className="small">
        Progress
      </label>
      <progress id={`run-${run.id}-progress`} max={1} value={p} aria-valuetext={`${pct} %`}>
        {pct} %
      </progress>
      <span className="small" aria-live="off">
        {pct} %
        {active
          ? run.status === 'running'
            ? ` · ${left !== null ? `about ${formatDuration(left)} left` : 'time left unknown'} of ${formatDuration(usualDuration(run))}${capText(run)}`
            : ` · waiting for the runner (usually ${formatDuration(usualDuration(run))}${capText(run)})`
          : ''}
      </span>
      {active && phase ? (
        <span className="small run-phase" role="status">
          {phase}
        </span>
      ) : null}
    </div>
  );
}
