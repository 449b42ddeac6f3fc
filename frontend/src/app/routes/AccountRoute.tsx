import { PageHeader } from '../../components/PageHeader';
import { ApiTokens } from '../../features/auth/components/ApiTokens';
import { PasswordForm } from '../../features/auth/components/PasswordForm';
import { useMe } from '../../lib/auth/me';
import { roleDescriptions } from '../../lib/auth/roles';

export function AccountRoute() {
  const me = useMe();
  if (!me.data) return null;
  const { name, role, has_password } = me.data;
  return (
    <>
      <PageHeader title="Account" />
      <section className="card" aria-labelledby="who-heading">
        <h2 id="who-heading">{name}</h2>
        <p>
          Role: <strong>{role}</strong> <span className="muted">— {roleDescriptions[role]}</span>
        </p>
      </section>
      <section className="card" aria-labelledby="password-heading">
        <h2 id="password-heading">{has_password ? 'Change password' : 'Set a password'}</h2>
        {has_password ? null : <p>You signed in with a one-time link and have no password yet: set one to sign in again later.</p>}
        <PasswordForm hasPassword={has_password} />
      </section>
      <ApiTokens />
    </>
  );
}
