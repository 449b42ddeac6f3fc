// Every account: change its role, disable or enable it, make a new one-time sign-in link, delete it.
// The server refuses what would leave no admin; its words are shown.
import { useState } from 'react';
import { ConfirmDialog, Dialog } from '../../../components/Dialog';
import { errorMessage } from '../../../lib/api/errors';
import type { Role, UserPublic } from '../../../lib/api/types';
import { ROLES } from '../../../lib/auth/roles';
import { formatDateTime } from '../../../lib/format';
import { useCreateSignInLink } from '../api/create-sign-in-link';
import { useDeleteUser } from '../api/delete-user';
import { useUpdateUser } from '../api/update-user';
import { SignInLinkShown } from './AddUserForm';

export function UsersTable({ users, currentUserId }: { users: UserPublic[]; currentUserId: number | null }) {
  const update = useUpdateUser();
  const del = useDeleteUser();
  const link = useCreateSignInLink();
  const [deleting, setDeleting] = useState<UserPublic | null>(null);
  const [linkFor, setLinkFor] = useState<UserPublic | null>(null);
  const [failed, setFailed] = useState<string | null>(null);

  const patch = (u: UserPublic, body: { role?: Role; disabled?: boolean }, what: string) => {
    setFailed(null);
    update.mutate({ id: u.id, body }, { onError: (e) => setFailed(`Could not ${what} ${u.name}: ${errorMessage(e)}`) });
  };

  return (
    <>
      {failed ? (
        <p className="state state-error" role="alert">
          {failed}
        </p>
      ) : null}
      <div className="table-scroll">
        <table className="table users-table">
          <caption className="visually-hidden">Users</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <UserRow
                key={u.id}
                user={u}
                self={u.id === currentUserId}
                pending={update.isPending}
                onPatch={(body, what) => patch(u, body, what)}
                onNewLink={() => {
                  setLinkFor(u);
                  link.reset();
                  link.mutate(u.id);
                }}
                onDelete={() => setDeleting(u)}
              />
            ))}
          </tbody>
        </table>
      </div>
      {deleting ? (
        <ConfirmDialog
          title={`Delete ${deleting.name}?`}
          confirmLabel={`Delete ${deleting.name}`}
          pending={del.isPending}
          error={del.isError ? errorMessage(del.error) : null}
          onClose={() => {
            del.reset();
            setDeleting(null);
          }}
          onConfirm={() => del.mutate(deleting.id, { onSuccess: () => setDeleting(null) })}
        >
          <p>
            Their sessions and API tokens stop working at once. The audit log keeps their name; jobs and runs keep “created by”. To keep the
            account but stop its use, disable it instead.
          </p>
        </ConfirmDialog>
      ) : null}
      {linkFor ? (
        <Dialog title={`Sign-in link for ${linkFor.name}`} onClose={() => setLinkFor(null)}>
          {link.isPending ? (
            <p role="status">Making a link…</p>
          ) : link.isError ? (
            <p className="field-error" role="alert">
              Could not make a link: {errorMessage(link.error)}
            </p>
          ) : link.data ? (
            <SignInLinkShown name={linkFor.name} link={link.data.sign_in_link} />
          ) : null}
        </Dialog>
      ) : null}
    </>
  );
}

interface UserRowProps {
  user: UserPublic;
  /** The signed-in person's own row: no role change, no actions. */
  self: boolean;
  pending: boolean;
  onPatch: (body: { role?: Role; disabled?: boolean }, what: string) => void;
  onNewLink: () => void;
  onDelete: () => void;
}

function UserRow({ user: u, self, pending, onPatch, onNewLink, onDelete }: UserRowProps) {
  return (
    <tr className={u.disabled ? 'row-disabled' : undefined}>
      <th scope="row">
        {u.name}
        {self ? (
          <>
            {' '}
            <span className="muted small">(you)</span>
          </>
        ) : null}
      </th>
      <td>
        {self ? (
          u.role
        ) : (
          <select aria-label={`Role of ${u.name}`} value={u.role} disabled={pending} onChange={(e) => onPatch({ role: e.target.value as Role }, 'change the role of')}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        )}
      </td>
      <td>
        {u.disabled ? <span className="badge badge-muted">disabled</span> : <span className="badge badge-ok">active</span>}{' '}
        {u.has_password ? null : <span className="badge badge-warn">no password yet</span>}
      </td>
      <td>{formatDateTime(u.created_at)}</td>
      <td>
        {self ? null : (
          <div className="row-actions">
            <button
              type="button"
              className="button button-small"
              disabled={pending}
              onClick={() => onPatch({ disabled: !u.disabled }, u.disabled ? 'enable' : 'disable')}
              aria-label={`${u.disabled ? 'Enable' : 'Disable'} ${u.name}`}
            >
              {u.disabled ? 'Enable' : 'Disable'}
            </button>
            <button type="button" className="button button-small" onClick={onNewLink} aria-label={`New sign-in link for ${u.name}`}>
              New sign-in link
            </button>
            <button type="button" className="button button-small button-danger" onClick={onDelete} aria-label={`Delete ${u.name}`}>
              Delete
            </button>
          </div>
        )}
      </td>
    </tr>
  );
}
