// A page (or part of one) that needs a role. The server is the authority: this only spares a person
// a form whose every submit would get 403, and says why.
import type { ReactNode } from 'react';
import type { Role } from '../lib/api/types';
import { useMe } from '../lib/auth/me';
import { atLeast } from '../lib/auth/roles';

export function RoleGate({ needed, what, children }: { needed: Role; what: string; children: ReactNode }) {
  const me = useMe();
  if (!me.data) return null; // the shell waits for /api/auth/me before rendering a page
  if (atLeast(me.data.role, needed)) return <>{children}</>;
  return (
    <div className="state state-error" role="alert">
      <p>
        <strong>Your role ({me.data.role}) cannot {what}.</strong> This needs the {needed} role; ask an admin to change yours.
      </p>
    </div>
  );
}
