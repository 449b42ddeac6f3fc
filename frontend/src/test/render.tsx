import type { ReactElement } from 'react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { setSignedInRole } from '../lib/api/errors';
import type { Me } from '../lib/api/types';
import { ME_QUERY_KEY } from '../lib/auth/me';

/** `me`: who is signed in (seeds GET /api/auth/me, so role checks need no request). */
export function renderWithProviders(ui: ReactElement, { route = '/', me }: { route?: string; me?: Me } = {}) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  if (me) {
    client.setQueryData(ME_QUERY_KEY, me);
    setSignedInRole(me.role);
  }
  return {
    client,
    ...render(
      <QueryClientProvider client={client}>
        <MemoryRouter initialEntries={[route]}>{ui}</MemoryRouter>
      </QueryClientProvider>,
    ),
  };
}

export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}
