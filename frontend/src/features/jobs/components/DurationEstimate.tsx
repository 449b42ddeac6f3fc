// The new-job form's duration line: the measuring time (a range when repeating until stable), per host
// when several hosts each run the job, plus the reference tools' allowance the server expects.
import { formatDuration } from '../../../lib/format';
import type { DurationEstimate as Estimate } from '../lib/job-form';

export function DurationEstimate({ estimate, upTo, expected, perHost }: Estimate & { perHost: boolean }) {
  return (
    <p className="estimate" aria-live="polite">
      Estimated duration:{' '}
      <strong>
        {estimate !== undefined ? formatDuration(estimate) : '—'}
        {upTo !== undefined ? ` – ${formatDuration(upTo)}` : ''}
      </strong>
      {upTo !== undefined ? ' (repeating until stable)' : ''}
      {estimate !== undefined && perHost ? ' per host' : ''}
      {expected && expected.reference ? (
        <span className="small">
          {' '}
          + up to {formatDuration(expected.reference)} for the reference tools: History shows up to {formatDuration(expected.upTo)}, the
          server&apos;s expected duration
        </span>
      ) : null}
    </p>
  );
}
