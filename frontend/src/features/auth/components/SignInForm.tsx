// Name and password. Errors in words: a wrong password, a rate limit with the wait (counted down),
// an unreachable server.
import { useEffect, useId, useState, type FormEvent } from 'react';
import { ApiError, formatWait } from '../../../lib/api/errors';
import type { Me } from '../../../lib/api/types';
import { useLogin } from '../api/login';
import { signInErrorText } from '../lib/messages';

export function SignInForm({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const id = useId();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [missing, setMissing] = useState(false);
  const [waitUntil, setWaitUntil] = useState<number | null>(null);
  const [now, setNow] = useState(() => Date.now());
  const login = useLogin();

  useEffect(() => {
    if (waitUntil === null) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [waitUntil]);

  const waitLeft = waitUntil !== null ? Math.max(0, Math.ceil((waitUntil - now) / 1000)) : 0;

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim() || !password) {
      setMissing(true);
      return;
    }
    setMissing(false);
    login.mutate(
      { name: name.trim(), password },
      {
        onSuccess: (me) => onSignedIn(me),
        onError: (err) => {
          if (err instanceof ApiError && err.status === 429 && err.retryAfterS !== null) {
            setNow(Date.now());
            setWaitUntil(Date.now() + err.retryAfterS * 1000);
          }
          if (err instanceof ApiError && err.status === 401) setPassword('');
        },
      },
    );
  };

  let error: string | null = null;
  if (missing) error = 'Enter your name and password.';
  else if (login.isError) {
    const rateLimited = login.error instanceof ApiError && login.error.status === 429 && waitUntil !== null;
    error = rateLimited
      ? waitLeft > 0
        ? `Too many failed sign-ins. Wait ${formatWait(waitLeft)} and try again.`
        : 'You may try again now.'
      : signInErrorText(login.error);
  }

  return (
    <form className="form signin-form" aria-label="Sign in" onSubmit={onSubmit} noValidate>
      <div className="field">
        <label htmlFor={`${id}-name`}>Name</label>
        <input
          id={`${id}-name`}
          name="username"
          type="text"
          autoComplete="username"
          autoCapitalize="none"
          spellCheck={false}
          autoFocus
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
      </div>
      <div className="field">
        <label htmlFor={`${id}-password`}>Password</label>
        <input
          id={`${id}-password`}
          name="password"
          type="password"
          autoComplete="current-password"
          value={password}
          aria-describedby={error ? `${id}-error` : undefined}
          onChange={(e) => setPassword(e.target.value)}
        />
      </div>
      {error ? (
        <p id={`${id}-error`} className="field-error" role="alert">
          {error}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={login.isPending || waitLeft > 0}>
          {login.isPending ? 'Signing in…' : 'Sign in'}
        </button>
      </div>
    </form>
  );
}
