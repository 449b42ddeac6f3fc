import { useQueryClient } from '@tanstack/react-query';
import { Navigate, NavLink, Outlet, useLocation, useNavigate } from 'react-router';
import { ErrorState, Loading } from '../components/Status';
import { paths } from '../config/paths';
import { useLogout } from '../features/auth/api/logout';
import { HealthIndicator } from '../features/health/components/HealthIndicator';
import { ApiError, errorMessage } from '../lib/api/errors';
import { useMe } from '../lib/auth/me';
import { currentPath } from '../lib/auth/next';
import { abilities } from '../lib/auth/roles';
import { useTheme } from '../lib/theme';

export function ThemeToggle() {
  const { theme, toggle } = useTheme();
  return (
    <button
      type="button"
      className="button button-ghost theme-toggle"
      onClick={toggle}
      aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}
      title={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}
    >
      <span aria-hidden="true">{theme === 'dark' ? '☀' : '☾'}</span>
    </button>
  );
}

/** The signed-in shell: every page inside it needs a session; without one the person goes to the
 * sign-in page, which brings them back here. */
export function Layout() {
  const me = useMe();
  const location = useLocation();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const logout = useLogout();

  if (me.error instanceof ApiError && me.error.status === 401) {
    return <Navigate to={paths.signIn(currentPath(location))} replace />;
  }
  const user = me.data;
  const can = abilities(user?.role);

  const signOut = () =>
    logout.mutate(undefined, {
      onSettled: async () => {
        await navigate(paths.signIn(), { replace: true });
        qc.clear();
      },
    });

  return (
    <div className="app">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <div className="topbar-inner">
          <NavLink to={paths.hosts} className="brand" end>
            hostbench
          </NavLink>
          {user ? (
            <nav aria-label="Main">
              <ul className="nav">
                <li>
                  <NavLink to={paths.hosts} end>
                    Hosts
                  </NavLink>
                </li>
                {can.operate ? (
                  <li>
                    <NavLink to={paths.newJob()}>New job</NavLink>
                  </li>
                ) : null}
                <li>
                  <NavLink to="/suites">Suites</NavLink>
                </li>
                <li>
                  <NavLink to="/schedules">Schedules</NavLink>
                </li>
                <li>
                  <NavLink to={paths.meshes}>Hosts together</NavLink>
                </li>
                <li>
                  <NavLink to="/health-checks">Health</NavLink>
                </li>
                <li>
                  <NavLink to={paths.history()}>History</NavLink>
                </li>
                <li>
                  <NavLink to={paths.compare()}>Compare</NavLink>
                </li>
                <li>
                  <NavLink to="/trends">Trends</NavLink>
                </li>
                <li>
                  <NavLink to="/fleet-view">Fleet view</NavLink>
                </li>
                <li>
                  <NavLink to={paths.audit}>Audit</NavLink>
                </li>
                {can.administer ? (
                  <li>
                    <NavLink to={paths.users}>Users</NavLink>
                  </li>
                ) : null}
              </ul>
            </nav>
          ) : null}
          <div className="topbar-end">
            <HealthIndicator />
            {user ? (
              <div className="user-menu" role="group" aria-label="Signed in">
                <NavLink to={paths.account} className="user-name" aria-label={`Account: ${user.name} (${user.role})`}>
                  {user.name} <span className="badge badge-muted role-badge">{user.role}</span>
                </NavLink>
                <button type="button" className="button button-small" onClick={signOut} disabled={logout.isPending}>
                  {logout.isPending ? 'Signing out…' : 'Sign out'}
                </button>
              </div>
            ) : null}
            <ThemeToggle />
          </div>
        </div>
      </header>
      <main id="main" className="main">
        {user ? (
          <Outlet />
        ) : me.isError ? (
          <ErrorState error={me.error} title="Could not check who is signed in" onRetry={() => void me.refetch()} />
        ) : (
          <Loading label="Checking your session…" />
        )}
        {logout.isError ? <p className="small muted">Sign-out answered: {errorMessage(logout.error)}</p> : null}
      </main>
    </div>
  );
}
