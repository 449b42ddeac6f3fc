import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { host } from '../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../test/render';
import { HostsRoute } from './HostsRoute';

afterEach(() => vi.unstubAllGlobals());

const FACETS = {
  count: 1200,
  statuses: { online: 1000, offline: 150, revoked: 50 },
  cpus: [{ value: 'AMD EPYC 9654', count: 800 }],
  labels: [{ key: 'rack', value: '12', count: 40 }],
};

/** The API as the table sees it; every /api/hosts query it was asked, in order. */
function serve(count: number, fleet = count) {
  const asked: URLSearchParams[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (req: Request) => {
      const url = new URL(req.url);
      if (url.pathname === '/api/hosts') {
        asked.push(url.searchParams);
        return jsonResponse({ data: [host], count });
      }
      if (url.pathname === '/api/hosts/facets') return jsonResponse({ ...FACETS, count: fleet });
      if (url.pathname === '/api/auth/me') return jsonResponse({ name: 'v', role: 'viewer' });
      return jsonResponse({ detail: 'nope' }, 404);
    }),
  );
  return asked;
}

describe('HostsRoute', () => {
  it('asks the server for one page of 50, sorted by name, and says how many match', async () => {
    const asked = serve(1200);
    renderWithProviders(<HostsRoute />, { route: '/hosts' });
    expect(await screen.findByText('Hosts 1–1 of 1,200 · page 1 of 24')).toBeInTheDocument();
    expect(asked[0]?.get('limit')).toBe('50');
    expect(asked[0]?.get('sort')).toBe('name');
    expect(screen.getByRole('button', { name: 'Next page' })).toBeEnabled();
    expect(screen.getByRole('button', { name: 'Previous page' })).toBeDisabled();
  });

  it('sends the sort, the filters, the search and the page to the server', async () => {
    const asked = serve(1200);
    renderWithProviders(<HostsRoute />, { route: '/hosts' });
    await screen.findByRole('button', { name: `Open ${host.name}` });
    fireEvent.click(screen.getByRole('button', { name: /^Cores/ }));
    await waitFor(() => expect(asked.at(-1)?.get('sort')).toBe('cores'));
    fireEvent.click(screen.getByRole('button', { name: /^Cores/ }));
    await waitFor(() => expect(asked.at(-1)?.get('order')).toBe('desc'));
    fireEvent.change(await screen.findByLabelText('Label'), { target: { value: 'rack=12' } });
    await waitFor(() => expect(asked.at(-1)?.getAll('label')).toEqual(['rack=12']));
    fireEvent.change(screen.getByLabelText('Status'), { target: { value: 'offline' } });
    await waitFor(() => expect(asked.at(-1)?.get('status')).toBe('offline'));
    fireEvent.change(screen.getByLabelText('Search'), { target: { value: 'epyc' } });
    await waitFor(() => expect(asked.at(-1)?.get('q')).toBe('epyc'));
    fireEvent.click(screen.getByRole('button', { name: 'Next page' }));
    await waitFor(() => expect(asked.at(-1)?.get('offset')).toBe('50'));
    expect(screen.getByRole('option', { name: 'offline (150)' })).toBeInTheDocument();
  });

  it('opens a host’s card from its row, and closes it', async () => {
    serve(1);
    renderWithProviders(<HostsRoute />, { route: '/hosts' });
    expect(screen.queryByRole('article')).not.toBeInTheDocument();
    fireEvent.click(await screen.findByRole('button', { name: `Open ${host.name}` }));
    expect(await screen.findByRole('heading', { name: host.name, level: 2 })).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: `Close ${host.name}` }));
    await waitFor(() => expect(screen.queryByRole('article')).not.toBeInTheDocument());
  });

  it('says so when no host matches the filters', async () => {
    serve(0, 1200);
    renderWithProviders(<HostsRoute />, { route: '/hosts?q=nothing' });
    expect(await screen.findByText('No host matches.')).toBeInTheDocument();
    expect(screen.getByLabelText('Search')).toHaveValue('nothing');
  });

  it('says no host has registered when the fleet is empty', async () => {
    serve(0);
    renderWithProviders(<HostsRoute />, { route: '/hosts' });
    expect(await screen.findByText('No host has registered yet.')).toBeInTheDocument();
  });
});
