// The new-job form's duration line: the measuring time (a range when repeating until stable), per host when
// several hosts each run the job. With reference tools, the server's estimate: their typical time on the hosts
// picked (each tool's cost model, hostbench_common/estimate.py) and, apart, the cap History shows as the expected
// duration (measuring at most plus the tools' allowance).
import { formatDuration } from '../../../lib/format';
import type { JobEstimate } from '../../../lib/api/types';
import type { DurationEstimate as Estimate } from '../lib/job-form';

export function DurationEstimate({ estimate, upTo, perHost, server }: Estimate & { perHost: boolean; server?: JobEstimate }) {
  if (server && estimate !== undefined) {
    return (
      <p className="estimate" aria-live="polite">
        Estimated duration: <strong>about {formatDuration(server.typical_s)}</strong>
        {perHost ? ' per host' : ''}
        {server.references.length ? (
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
