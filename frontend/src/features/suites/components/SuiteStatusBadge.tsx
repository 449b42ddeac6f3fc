import type { SuiteRun } from '../api/suites';

const tone: Record<SuiteRun['status'], string> = {
  running: 'badge-info',
  succeeded: 'badge-ok',
  failed: 'badge-bad',
  cancelled: 'badge-muted',
};

export function SuiteStatusBadge({ status }: { status: SuiteRun['status'] }) {
  return (
    <span className={`badge ${tone[status] ?? 'badge-muted'}`} data-status={status}>
      {status === 'running' ? <span className="pulse" aria-hidden="true" /> : null}
      {status}
    </span>
  );
}
