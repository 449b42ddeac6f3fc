import type { QueryClient } from '@tanstack/react-query';
import { Navigate, createBrowserRouter, useLocation, type LoaderFunctionArgs, type RouteObject } from 'react-router';
import { FleetViewPage } from '../features/fleet-view/components/FleetViewPage';
import { hostFacetsQueryOptions, hostPageQueryOptions } from '../features/hosts/api/get-hosts';
import { readTableState, toQuery } from '../features/hosts/components/HostsTable';
import { SchedulesPage } from '../features/schedules/components/SchedulesPage';
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
import { TrendsRoute } from './routes/TrendsRoute';
import { UsersRoute } from './routes/UsersRoute';

/** /runs was the first name of History; old links keep working, filters included. */
function RunsRedirect() {
  const { search } = useLocation();
  return <Navigate to={`/history${search}`} replace />;
}

/** The hosts table's page and filters are asked for as the address is known, beside GET /api/auth/me, not after it
 * (the shell draws its pages once it knows who is signed in): the first page of a fleet arrives sooner. */
const prefetchHosts =
  (qc: QueryClient | undefined) =>
  ({ request }: LoaderFunctionArgs) => {
    if (qc) {
      void qc.prefetchQuery(hostPageQueryOptions(toQuery(readTableState(new URL(request.url).searchParams))));
      void qc.prefetchQuery(hostFacetsQueryOptions());
    }
    return null;
  };

export const routesWith = (qc?: QueryClient): RouteObject[] => [
  // Reachable signed out; everything under Layout needs a session.
  { path: 'signin', element: <SignInRoute />, errorElement: <RouteError /> },
  { path: 'signin/link', element: <SignInLinkRoute />, errorElement: <RouteError /> },
  {
    element: <Layout />,
    errorElement: <RouteError />,
    children: [
      { index: true, element: <HostsRoute />, loader: prefetchHosts(qc) },
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
      { path: 'trends', element: <TrendsRoute /> },
      { path: 'fleet-view', element: <FleetViewPage /> },
      { path: 'account', element: <AccountRoute /> },
      { path: 'users', element: <UsersRoute /> },
      { path: 'audit', element: <AuditRoute /> },
      { path: '*', element: <NotFoundRoute /> },
    ],
  },
];

export const routes = routesWith();

export const createRouter = (qc?: QueryClient) => createBrowserRouter(routesWith(qc));
