import { screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { host } from '../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../test/render';
import { HostsRoute } from './HostsRoute';

afterEach(() => vi.unstubAllGlobals());

function serve(count: number) {
  vi.stubGlobal(
    'fetch',
    vi.fn(async (req: Request) => {
      const url = new URL(req.url);
      if (url.pathname === '/api/hosts') return jsonResponse({ data: [host], count });
      if (url.pathname === '/api/auth/me') return jsonResponse({ name: 'v', role: 'viewer' });
      return jsonResponse({ detail: 'nope' }, 404);
    }),
  );
}

describe('HostsRoute', () => {
  it('says when the page holds fewer hosts than there are', async () => {
    serve(1200);
    renderWithProviders(<HostsRoute />, { route: '/hosts' });
    expect(await screen.findByText(/Showing the first 1 of 1,200 hosts/)).toBeInTheDocument();
  });

  it('says nothing of pages when every host is on this one', async () => {
    serve(1);
    renderWithProviders(<HostsRoute />, { route: '/hosts' });
    expect(await screen.findByText(host.name)).toBeInTheDocument();
    expect(screen.queryByText(/Showing the first/)).not.toBeInTheDocument();
  });
});
