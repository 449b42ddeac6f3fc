// The page a one-time sign-in link opens (`/signin/link#hblink_…`): the token rides in the fragment,
// which the browser never sends to a server or writes to a log; we post it once, drop it from the
// address bar, then ask the person to choose a password.
import { useEffect, useRef } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Loading } from '../../../components/Status';
import type { Me } from '../../../lib/api/types';
import { meQueryOptions } from '../../../lib/auth/me';
import { useSignInWithLink } from '../api/sign-in-with-link';
import { linkErrorText } from '../lib/messages';
import { PasswordForm } from './PasswordForm';

/** `hblink_…` from a location hash (`#hblink_…`), or null. */
export function tokenFromHash(hash: string): string | null {
  const raw = hash.replace(/^#/, '').trim();
  if (!raw) return null;
  const token = raw.startsWith('token=') ? decodeURIComponent(raw.slice('token='.length)) : raw;
  return token || null;
}

/** This tab signed in with a link (the person it signed in, by id) and has not yet set a password or gone on: a reload,
 * which finds no token in the address any more, shows the password form again while the session lasts. */
export const LINK_SIGNIN_KEY = 'hostbench.linkSignIn';

const remembered = (): string | null => {
  try {
    return globalThis.sessionStorage?.getItem(LINK_SIGNIN_KEY) ?? null;
  } catch {
    return null;
  }
};

const remember = (me: Me | null) => {
  try {
    if (me) globalThis.sessionStorage?.setItem(LINK_SIGNIN_KEY, String(me.id));
    else globalThis.sessionStorage?.removeItem(LINK_SIGNIN_KEY);
  } catch {
    // storage refused (private mode): a reload then asks for the link again
  }
};

export function LinkSignIn({ token, onDone }: { token: string | null; onDone: (me: Me | null) => void }) {
  const exchange = useSignInWithLink();
  // A token works once: React's development double-mount must not post it twice.
  const sent = useRef(false);
  const earlier = token ? null : remembered();
  // After a reload: is the session the link opened still there?
  const session = useQuery({ ...meQueryOptions(), enabled: earlier !== null });

  useEffect(() => {
    if (!token || sent.current) return;
    sent.current = true;
    exchange.mutate(token, { onSuccess: (me) => remember(me) });
  }, [token, exchange]);

  const done = (me: Me | null) => {
    remember(null);
    onDone(me);
  };

  if (!token && earlier !== null) {
    if (session.data && String(session.data.id) === earlier) return <SignedIn me={session.data} onDone={done} />;
    if (session.isPending) return <Loading label="Checking your session…" />;
  }
  if (!token) {
    return (
      <p className="state state-error" role="alert">
        This address holds no sign-in token. Open the whole link you were given (it ends in <code>#hblink_…</code>), or sign in with your
        name and password.
      </p>
    );
  }
  if (exchange.isError) {
    return (
      <p className="state state-error" role="alert">
        {linkErrorText(exchange.error)}
      </p>
    );
  }
  if (!exchange.data) return <Loading label="Signing you in…" />;
  return <SignedIn me={exchange.data} onDone={done} />;
}

function SignedIn({ me, onDone }: { me: Me; onDone: (me: Me | null) => void }) {
  return (
    <section aria-labelledby="link-signed-in">
      <h2 id="link-signed-in">
        Signed in as {me.name} <span className="muted">({me.role})</span>
      </h2>
      {me.has_password ? (
        <>
          <p>You have a password already; you may change it here, or go on.</p>
          <PasswordForm hasPassword onDone={() => onDone(me)} />
        </>
      ) : (
        <>
          <p>
            Choose a password now: the link you used works only once, and you will need the password to sign in from another browser or
            after this session ends.
          </p>
          <PasswordForm hasPassword={false} onDone={() => onDone(me)} submitLabel="Set password and continue" />
        </>
      )}
      <p>
        <button type="button" className="button button-ghost button-small" onClick={() => onDone(me)}>
          Later: go to the dashboard
        </button>
      </p>
    </section>
  );
}
