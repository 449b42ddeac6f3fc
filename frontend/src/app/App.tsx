import { useEffect, useState } from 'react';
import { QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from 'react-router';
import { paths } from '../config/paths';
import { onUnauthorized } from '../lib/api/client';
import { ME_QUERY_KEY } from '../lib/auth/me';
import { currentPath } from '../lib/auth/next';
import { createQueryClient } from '../lib/query-client';
import { ThemeProvider } from '../lib/theme';
import { createRouter } from './router';

export function App() {
  const [queryClient] = useState(createQueryClient);
  const [router] = useState(() => createRouter(queryClient));

  // A 401 from any call: the session ended (expired, signed out elsewhere, account disabled). Go to
  // the sign-in page, which brings the person back here.
  useEffect(
    () =>
      onUnauthorized(() => {
        const here = router.state.location;
        if (here.pathname.startsWith('/signin')) return;
        queryClient.removeQueries({ queryKey: ME_QUERY_KEY });
        void router.navigate(paths.signIn(currentPath(here)), { replace: true });
      }),
    [queryClient, router],
  );

  return (
    <QueryClientProvider client={queryClient}>
      <ThemeProvider>
        <RouterProvider router={router} />
      </ThemeProvider>
    </QueryClientProvider>
  );
}
