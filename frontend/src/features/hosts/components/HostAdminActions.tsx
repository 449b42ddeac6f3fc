// Admin actions on one host: revoke its runner credential, rotate it, delete the host (keeping or
// deleting its history). Each asks first and says what will happen.
import { useId, useState } from 'react';
import { ConfirmDialog } from '../../../components/Dialog';
import { errorMessage } from '../../../lib/api/errors';
import type { HostHistory, HostPublic } from '../../../lib/api/types';
import { useDeleteHost } from '../api/delete-host';
import { useRevokeHost } from '../api/revoke-host';
import { useRotateHostCredential } from '../api/rotate-host-credential';

type Pending = 'revoke' | 'rotate' | 'delete' | null;

export function HostAdminActions({ host }: { host: HostPublic }) {
  const id = useId();
  const [asking, setAsking] = useState<Pending>(null);
  const [history, setHistory] = useState<HostHistory>('keep');
  const revoke = useRevokeHost();
  const rotate = useRotateHostCredential();
  const del = useDeleteHost();
  const close = () => {
    revoke.reset();
    rotate.reset();
    del.reset();
    setAsking(null);
  };

  return (
    <div className="host-admin" role="group" aria-label={`Admin actions for ${host.name}`}>
      {host.revoked ? null : (
        <>
          <button type="button" className="button button-small" onClick={() => setAsking('rotate')} aria-label={`Rotate credential of ${host.name}`}>
            Rotate credential
          </button>
          <button type="button" className="button button-small button-danger" onClick={() => setAsking('revoke')} aria-label={`Revoke ${host.name}`}>
            Revoke
          </button>
        </>
      )}
      <button type="button" className="button button-small button-danger" onClick={() => setAsking('delete')} aria-label={`Delete ${host.name}`}>
        Delete
      </button>

      {asking === 'revoke' ? (
        <ConfirmDialog
          title={`Revoke ${host.name}?`}
          confirmLabel="Revoke runner"
          pending={revoke.isPending}
          error={revoke.isError ? errorMessage(revoke.error) : null}
          onClose={close}
          onConfirm={() => revoke.mutate(host.id, { onSuccess: close })}
        >
          <p>
            The runner’s credential stops working now: its next call gets 401 and it stops, ending any kernel it is running (that run ends with
            the reason). The host stays listed, greyed, with its history, until you delete it. To bring it back, add it again with a new
            token.
          </p>
        </ConfirmDialog>
      ) : null}
      {asking === 'rotate' ? (
        <ConfirmDialog
          title={`Rotate the credential of ${host.name}?`}
          confirmLabel="Rotate credential"
          danger={false}
          pending={rotate.isPending}
          error={rotate.isError ? errorMessage(rotate.error) : null}
          onClose={close}
          onConfirm={() => rotate.mutate(host.id, { onSuccess: close })}
        >
          <p>The runner is told at its next heartbeat and swaps to a new credential; the old one works until then. Runs go on.</p>
        </ConfirmDialog>
      ) : null}
      {asking === 'delete' ? (
        <ConfirmDialog
          title={`Delete ${host.name}?`}
          confirmLabel={history === 'delete' ? 'Delete host and history' : 'Delete host, keep history'}
          pending={del.isPending}
          error={del.isError ? errorMessage(del.error) : null}
          onClose={close}
          onConfirm={() => del.mutate({ id: host.id, history }, { onSuccess: close })}
        >
          <p>
            {host.revoked ? 'The host is gone from the list.' : 'Its runner credential stops working and the host is gone from the list.'}
          </p>
          <fieldset className="fieldset">
            <legend>Its runs and results</legend>
            <label className="check">
              <input type="radio" name={`${id}-history`} value="keep" checked={history === 'keep'} onChange={() => setHistory('keep')} />
              Keep history (runs stay in History and Compare under the host’s name)
            </label>
            <label className="check">
              <input type="radio" name={`${id}-history`} value="delete" checked={history === 'delete'} onChange={() => setHistory('delete')} />
              Delete history (every run, sample and result of this host; cannot be undone)
            </label>
          </fieldset>
        </ConfirmDialog>
      ) : null}
    </div>
  );
}
