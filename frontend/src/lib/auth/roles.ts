// Roles, lowest first: each may do everything the ones before it may (docs/security.md). The
// dashboard hides what a role cannot do; the server decides, and its 403 is shown, never swallowed.
import type { Role } from '../api/types';

export const ROLES: readonly Role[] = ['viewer', 'operator', 'admin'];

export function atLeast(role: Role | null | undefined, needed: Role): boolean {
  if (!role) return false;
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/** What each role may do, in the words the UI gates on. */
export interface Abilities {
  /** create jobs, cancel runs, edit labels, enter or clear peaks */
  operate: boolean;
  /** users, Add host, revoke / rotate / delete hosts */
  administer: boolean;
}

export function abilities(role: Role | null | undefined): Abilities {
  return { operate: atLeast(role, 'operator'), administer: atLeast(role, 'admin') };
}

export const roleDescriptions: Record<Role, string> = {
  viewer: 'reads everything; manages their own password and API tokens',
  operator: 'viewer, plus creates jobs, cancels runs, edits labels and peaks',
  admin: 'operator, plus users, Add host, revoke / rotate / delete hosts',
};
