import { useState } from 'react';
import { PageHeader } from '../../components/PageHeader';
import { ErrorState, Loading } from '../../components/Status';
import { useUsers } from '../../features/users/api/get-users';
import { AddUserForm } from '../../features/users/components/AddUserForm';
import { UsersTable } from '../../features/users/components/UsersTable';
import { useMe } from '../../lib/auth/me';
import { RoleGate } from '../RoleGate';

function Users() {
  const users = useUsers();
  const me = useMe();
  const [adding, setAdding] = useState(false);
  return (
    <>
      <PageHeader title="Users">
        {adding ? null : (
          <button type="button" className="button button-primary" onClick={() => setAdding(true)}>
            Add user
          </button>
        )}
      </PageHeader>
      {adding ? (
        <section className="card" aria-labelledby="add-user-heading">
          <h2 id="add-user-heading">Add user</h2>
          <AddUserForm onDone={() => setAdding(false)} />
        </section>
      ) : null}
      {users.isPending ? (
        <Loading label="Loading users…" />
      ) : users.isError ? (
        <ErrorState error={users.error} title="Could not load users" onRetry={() => void users.refetch()} />
      ) : (
        <section className="card" aria-label="All users">
          <UsersTable users={users.data.data} currentUserId={me.data?.id ?? null} />
        </section>
      )}
    </>
  );
}

export function UsersRoute() {
  return (
    <RoleGate needed="admin" what="manage users">
      <Users />
    </RoleGate>
  );
}
