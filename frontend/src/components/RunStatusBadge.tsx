import type { RunStatus } from '../lib/api/types';

const tone: Record<RunStatus, string> = {
  queued: 'badge-muted',
  dispatched: 'badge-info',
  running: 'badge-info',
  succeeded: 'badge-ok',
  failed: 'badge-bad',
  untrusted: 'badge-warn',
  cancelled: 'badge-muted',
};

export function RunStatusBadge({ status }: { status: RunStatus }) {
  return (
    <span className={`badge ${tone[status] ?? 'badge-muted'}`} data-status={status}>
      {status === 'running' ? <span className="pulse" aria-hidden="true" /> : null}
      {status}
    </span>
  );
}
