// Asks before cancelling a suite run, and says what cancelling does.
import { ConfirmDialog } from '../../../components/Dialog';
import { errorMessage } from '../../../lib/api/errors';
import type { SuiteRun } from '../api/suites';

export function CancelSuiteDialog({
  run,
  pending,
  error,
  onClose,
  onConfirm,
}: {
  run: SuiteRun;
  pending: boolean;
  error: unknown;
  onClose: () => void;
  onConfirm: () => void;
}) {
  const left = run.runs_total - run.runs_done;
  return (
    <ConfirmDialog
      title={`Cancel suite run #${run.id}?`}
      confirmLabel="Cancel the suite"
      closeLabel="Keep it running"
      pending={pending}
      error={error ? errorMessage(error) : undefined}
      onClose={onClose}
      onConfirm={onConfirm}
    >
      <p>
        Every run of {run.title} still queued or running ({left} of {run.runs_total}) ends <strong>cancelled</strong>: a running one stops at
        its runner&apos;s next check-in (within seconds). Runs already done keep their results.
      </p>
    </ConfirmDialog>
  );
}
