import { createBrowserRouter, type RouteObject } from 'react-router';
import { Layout } from './Layout';
import { HostsRoute } from './routes/HostsRoute';
import { NewJobRoute } from './routes/NewJobRoute';
import { NotFoundRoute, RouteError } from './routes/NotFoundRoute';
import { RunRoute } from './routes/RunRoute';
import { RunsRoute } from './routes/RunsRoute';

// Later pages (memory, disk, network, GPU results, compare, history, export) mount here.
export const routes: RouteObject[] = [
  {
    element: <Layout />,
    errorElement: <RouteError />,
    children: [
      { index: true, element: <HostsRoute /> },
      { path: 'jobs/new', element: <NewJobRoute /> },
      { path: 'runs', element: <RunsRoute /> },
      { path: 'runs/:id', element: <RunRoute /> },
      { path: '*', element: <NotFoundRoute /> },
    ],
  },
];

export const createRouter = () => createBrowserRouter(routes);
