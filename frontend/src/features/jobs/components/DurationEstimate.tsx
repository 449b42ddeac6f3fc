// The new-job form's duration line: the server's estimate (POST /api/jobs/estimate: the typical time on the hosts
// picked, from hostbench_common/estimate.py, with or without reference tools) and, apart, the cap History shows
// as the expected duration (measuring at most plus the tools' allowance), per host when several hosts each run
// the job. Until the server answers (or where it cannot), the measuring time from the published terms (a range
// when repeating until stable), which has no reference allowance in it.
import { formatDuration } from '../../../lib/format';
import type { JobEstimate } from '../../../lib/api/types';
import type { DurationEstimate as Estimate } from '../lib/job-form';

export function DurationEstimate({ estimate, upTo, perHost, server, withTools }: Estimate & { perHost: boolean; server?: JobEstimate; withTools: boolean }) {
  if (server && typeof server.typical_s === 'number' && typeof server.cap_s === 'number' && estimate !== undefined) {
    return (
      <p className="estimate" aria-live="polite">
        Estimated duration: <strong>about {formatDuration(server.typical_s)}</strong>
        {perHost ? ' per host' : ''}
        {!withTools ? null : server.references.length ? (
          <span className="small">
            {' '}
            (measuring {formatDuration(estimate)}, then {server.references.length} reference{' '}
            {server.references.length === 1 ? 'run' : 'runs'}: {server.references.map((r) => `${r.what} ~${formatDuration(r.typical_s)}`).join('; ')})
          </span>
        ) : (
          <span className="small"> (no reference tool applies: none runs)</span>
        )}
        <span className="small"> · cap {formatDuration(server.cap_s)}, the run&apos;s limit</span>
      </p>
    );
  }
  return (
    <p className="estimate" aria-live="polite">
      Estimated duration:{' '}
      <strong>
        {estimate !== undefined ? formatDuration(estimate) : '—'}
        {upTo !== undefined ? ` – ${formatDuration(upTo)}` : ''}
      </strong>
      {upTo !== undefined ? ' (repeating until stable)' : ''}
      {estimate !== undefined && perHost ? ' per host' : ''}
    </p>
  );
}
