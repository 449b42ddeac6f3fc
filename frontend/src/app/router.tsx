import { Navigate, createBrowserRouter, useLocation, type RouteObject } from 'react-router';
import { FleetViewPage } from '../features/fleet-view/components/FleetViewPage';
import { SchedulesPage } from '../features/schedules/components/SchedulesPage';
import { TrendsPage } from '../features/trends/components/TrendsPage';
import { Layout } from './Layout';
import { AccountRoute } from './routes/AccountRoute';
import { AuditRoute } from './routes/AuditRoute';
import { CompareRoute } from './routes/CompareRoute';
import { HealthRoute } from './routes/HealthRoute';
import { HistoryRoute } from './routes/HistoryRoute';
import { HostsRoute } from './routes/HostsRoute';
import { MeshRoute } from './routes/MeshRoute';
import { MeshesRoute } from './routes/MeshesRoute';
import { NewJobRoute } from './routes/NewJobRoute';
import { NotFoundRoute, RouteError } from './routes/NotFoundRoute';
import { ReportRoute } from './routes/ReportRoute';
import { RunRoute } from './routes/RunRoute';
import { SignInLinkRoute } from './routes/SignInLinkRoute';
import { SignInRoute } from './routes/SignInRoute';
import { SuiteRunRoute } from './routes/SuiteRunRoute';
import { SuitesRoute } from './routes/SuitesRoute';
import { UsersRoute } from './routes/UsersRoute';

/** /runs was the first name of History; old links keep working, filters included. */
function RunsRedirect() {
  const { search } = useLocation();
  return <Navigate to={`/history${search}`} replace />;
}

export const routes: RouteObject[] = [
  // Reachable signed out; everything under Layout needs a session.
  { path: 'signin', element: <SignInRoute />, errorElement: <RouteError /> },
  { path: 'signin/link', element: <SignInLinkRoute />, errorElement: <RouteError /> },
  {
    element: <Layout />,
    errorElement: <RouteError />,
    children: [
      { index: true, element: <HostsRoute /> },
      { path: 'jobs/new', element: <NewJobRoute /> },
      { path: 'suites', element: <SuitesRoute /> },
      { path: 'health-checks', element: <HealthRoute /> },
      { path: 'suite-runs/:id', element: <SuiteRunRoute /> },
      { path: 'schedules', element: <SchedulesPage /> },
      { path: 'meshes', element: <MeshesRoute /> },
      { path: 'meshes/:id', element: <MeshRoute /> },
      { path: 'history', element: <HistoryRoute /> },
      { path: 'runs', element: <RunsRedirect /> },
      { path: 'runs/:id', element: <RunRoute /> },
      { path: 'compare', element: <CompareRoute /> },
      { path: 'report', element: <ReportRoute /> },
      { path: 'trends', element: <TrendsPage /> },
      { path: 'fleet-view', element: <FleetViewPage /> },
      { path: 'account', element: <AccountRoute /> },
      { path: 'users', element: <UsersRoute /> },
      { path: 'audit', element: <AuditRoute /> },
      { path: '*', element: <NotFoundRoute /> },
    ],
  },
];

export const createRouter = () => createBrowserRouter(routes);
