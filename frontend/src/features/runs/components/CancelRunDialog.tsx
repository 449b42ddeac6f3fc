// Asks before cancelling a run, and says what cancelling does.
import { ConfirmDialog } from '../../../components/Dialog';
import type { RunPublic } from '../../../lib/api/types';

export function CancelRunDialog({ run, onClose, onConfirm }: { run: RunPublic; onClose: () => void; onConfirm: () => void }) {
  return (
    <ConfirmDialog
      title={`Cancel run #${run.id}?`}
      confirmLabel="Cancel the run"
      closeLabel="Keep it running"
      onClose={onClose}
      onConfirm={onConfirm}
    >
      <p>
        The runner on {run.host_name} stops the kernel at its next check-in (within seconds). The samples so far stay on this page; the run ends{' '}
        <strong>cancelled</strong>, without results.
      </p>
    </ConfirmDialog>
  );
}
