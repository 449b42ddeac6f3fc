import { useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { paths } from '../../config/paths';
import { LinkSignIn, tokenFromHash } from '../../features/auth/components/LinkSignIn';
import { AuthPage } from './SignInRoute';

/** `/signin/link#hblink_…`: the token is read once from the fragment, which is then dropped from the
 * address bar (and from history) so it is not left lying around. */
export function SignInLinkRoute() {
  const [token] = useState(() => tokenFromHash(globalThis.location?.hash ?? ''));
  const navigate = useNavigate();
  useEffect(() => {
    if (globalThis.location?.hash) globalThis.history.replaceState(globalThis.history.state, '', globalThis.location.pathname);
  }, []);
  return (
    <AuthPage title="Sign in with a link">
      <LinkSignIn token={token} onDone={() => void navigate(paths.hosts, { replace: true })} />
      <p className="small muted">
        <Link to={paths.signIn()}>Sign in with name and password instead</Link>
      </p>
    </AuthPage>
  );
}
