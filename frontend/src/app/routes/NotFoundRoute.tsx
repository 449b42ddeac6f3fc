import { Link, isRouteErrorResponse, useRouteError } from 'react-router';
import { paths } from '../../config/paths';

export function NotFoundRoute() {
  return (
    <div className="state state-empty">
      <h1>Page not found</h1>
      <p>
        <Link to={paths.hosts}>Back to hosts</Link>
      </p>
    </div>
  );
}

export function RouteError() {
  const error = useRouteError();
  const message = isRouteErrorResponse(error) ? `${error.status} ${error.statusText}` : error instanceof Error ? error.message : String(error);
  return (
    <div className="state state-error" role="alert">
      <h1>This page failed</h1>
      <p>{message}</p>
      <p>
        <Link to={paths.hosts}>Back to hosts</Link>
      </p>
    </div>
  );
}
