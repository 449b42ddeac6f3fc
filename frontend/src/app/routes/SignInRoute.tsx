import type { ReactNode } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { SignInForm } from '../../features/auth/components/SignInForm';
import { safeNext } from '../../lib/auth/next';
import { ThemeToggle } from '../Layout';

/** A page of its own (no navigation: nothing else is reachable signed out). */
export function AuthPage({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div className="app auth-app">
      <main id="main" className="auth-main">
        <div className="auth-brand">
          <span className="brand">hostbench</span>
          <ThemeToggle />
        </div>
        <section className="card auth-card" aria-labelledby="auth-title">
          <h1 id="auth-title">{title}</h1>
          {children}
        </section>
      </main>
    </div>
  );
}

export function SignInRoute() {
  const [search] = useSearchParams();
  const navigate = useNavigate();
  const next = safeNext(search.get('next'));
  return (
    <AuthPage title="Sign in">
      <SignInForm onSignedIn={() => void navigate(next, { replace: true })} />
      <p className="small muted">
        No account yet, or lost your password? An admin can give you a one-time sign-in link (Users page, or{' '}
        <code>./hostbench user add NAME</code> on the server).
      </p>
    </AuthPage>
  );
}
