// Progress comes from the server (RunPublic.progress); time left is the expected duration less the
// time elapsed since the run started, ticking locally between server updates.
import { useEffect, useState } from 'react';
import type { RunPublic } from '../../../lib/api/types';
import { isActive } from '../../../lib/api/types';
import { formatDuration } from '../../../lib/format';

export function timeLeft(run: Pick<RunPublic, 'status' | 'started_at' | 'expected_duration_s' | 'progress'>, now: number): number | null {
  if (!isActive(run.status)) return 0;
  const expected = run.expected_duration_s;
  if (!Number.isFinite(expected)) return null;
  const started = run.started_at ? Date.parse(run.started_at) : NaN;
  if (Number.isNaN(started)) return expected * (1 - clamp01(run.progress));
  const byClock = expected - (now - started) / 1000;
  const byProgress = expected * (1 - clamp01(run.progress));
  // The server's progress wins when the local clock disagrees with it by more than a few seconds.
  return Math.max(0, Math.abs(byClock - byProgress) > 5 && run.progress > 0 ? byProgress : byClock);
}

function clamp01(v: number): number {
  return Math.min(1, Math.max(0, Number.isFinite(v) ? v : 0));
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
            ? ` · ${left !== null ? `${formatDuration(left)} left` : 'time left unknown'} of ${formatDuration(run.expected_duration_s)}`
            : ` · waiting for the runner (expected ${formatDuration(run.expected_duration_s)})`
          : ''}
      </span>
    </div>
  );
}
