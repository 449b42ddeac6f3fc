import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ApiTokenPublic } from '../../../lib/api/types';
import { jsonResponse, renderWithProviders } from '../../../test/render';
import { ApiTokens } from './ApiTokens';

afterEach(() => vi.unstubAllGlobals());

const existing: ApiTokenPublic = { id: 4, name: 'ci', created_at: '2026-11-01T10:00:00Z', last_used_at: null, expires_at: null };
const created = { id: 5, name: 'nightly', token: 'hbpat_s3cr3t_value', created_at: '2026-11-02T10:00:00Z', expires_at: '2027-01-31T10:00:00Z' };

function serve() {
  let list = [existing];
  const fetchMock = vi.fn(async (req: Request) => {
    const path = new URL(req.url).pathname;
    if (path === '/api/me/tokens' && req.method === 'GET') return jsonResponse({ data: list, count: list.length });
    if (path === '/api/me/tokens' && req.method === 'POST') {
      list = [...list, { id: created.id, name: created.name, created_at: created.created_at, last_used_at: null, expires_at: created.expires_at }];
      return jsonResponse(created, 201);
    }
    if (req.method === 'DELETE') {
      list = list.filter((t) => `/api/me/tokens/${t.id}` !== path);
      return new Response(null, { status: 204 });
    }
    return jsonResponse({ detail: 'nope' }, 404);
  });
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

describe('ApiTokens', () => {
  it('shows a new token once, with a copy button and "you will not see it again"; the list never shows it', async () => {
    const fetchMock = serve();
    const user = userEvent.setup();
    renderWithProviders(<ApiTokens />);
    expect(await screen.findByRole('rowheader', { name: 'ci' })).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Create token' }));
    expect(screen.getByLabelText('Token name')).toHaveAccessibleDescription('Name the token (what will use it)');
    await user.type(screen.getByLabelText('Token name'), 'nightly');
    await user.selectOptions(screen.getByLabelText('Expires after'), '90 days');
    await user.click(screen.getByRole('button', { name: 'Create token' }));
    const post = fetchMock.mock.calls.map(([r]) => r).find((r) => r.method === 'POST') as Request;
    expect(await post.json()).toEqual({ name: 'nightly', expires_days: 90 });

    const once = await screen.findByRole('region', { name: 'New token “nightly”' });
    expect(within(once).getByRole('note')).toHaveTextContent('Copy it now: you will not see it again.');
    expect(within(once).getByTestId('new-api-token')).toHaveTextContent('hbpat_s3cr3t_value');
    await user.click(within(once).getByRole('button', { name: 'Copy new api token' }));
    expect(await navigator.clipboard.readText()).toBe('hbpat_s3cr3t_value');
    expect(within(once).getByRole('status')).toHaveTextContent('New API token copied');

    expect(await screen.findByRole('rowheader', { name: 'nightly' })).toBeInTheDocument();
    await user.click(within(once).getByRole('button', { name: 'I have copied it' }));
    expect(screen.queryByText(/hbpat_s3cr3t_value/)).not.toBeInTheDocument();
    expect(screen.getByRole('rowheader', { name: 'nightly' })).toBeInTheDocument();
    expect(screen.getByRole('form', { name: 'New API token' })).toBeInTheDocument();
  });

  it('revokes a token after asking', async () => {
    const fetchMock = serve();
    const user = userEvent.setup();
    renderWithProviders(<ApiTokens />);
    await user.click(await screen.findByRole('button', { name: 'Revoke token ci' }));
    const dialog = screen.getByRole('dialog', { name: 'Revoke token “ci”?' });
    expect(dialog).toHaveTextContent('Scripts using it get 401');
    await user.click(within(dialog).getByRole('button', { name: 'Revoke token' }));
    const del = fetchMock.mock.calls.map(([r]) => r).find((r) => r.method === 'DELETE') as Request;
    expect(new URL(del.url).pathname).toBe('/api/me/tokens/4');
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(await screen.findByText('You have no API token.')).toBeInTheDocument();
  });
});
