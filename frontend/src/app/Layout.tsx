import { NavLink, Outlet } from 'react-router';
import { paths } from '../config/paths';
import { HealthIndicator } from '../features/health/components/HealthIndicator';
import { useTheme } from '../lib/theme';

export function Layout() {
  const { theme, toggle } = useTheme();
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
          <nav aria-label="Main">
            <ul className="nav">
              <li>
                <NavLink to={paths.hosts} end>
                  Hosts
                </NavLink>
              </li>
              <li>
                <NavLink to={paths.newJob()}>New job</NavLink>
              </li>
              <li>
                <NavLink to={paths.history()}>History</NavLink>
              </li>
              <li>
                <NavLink to={paths.compare()}>Compare</NavLink>
              </li>
            </ul>
          </nav>
          <div className="topbar-end">
            <HealthIndicator />
            <button
              type="button"
              className="button button-ghost theme-toggle"
              onClick={toggle}
              aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}
              title={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}
            >
              <span aria-hidden="true">{theme === 'dark' ? '☀' : '☾'}</span>
            </button>
          </div>
        </div>
      </header>
      <main id="main" className="main">
        <Outlet />
      </main>
    </div>
  );
}
