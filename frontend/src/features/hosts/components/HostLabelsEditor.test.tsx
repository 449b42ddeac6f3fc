import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { host } from '../../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../../test/render';
import { HostLabelsEditor } from './HostLabelsEditor';

afterEach(() => vi.unstubAllGlobals());

describe('HostLabelsEditor', () => {
  it('edits the labels in place and PATCHes them, an emptied field as null', async () => {
    const fetchMock = vi.fn(async (_req: Request) => jsonResponse({ ...host, labels: { provider: 'gcp', instance_type: null, region: 'europe-west4' } }));
    vi.stubGlobal('fetch', fetchMock);
    const user = userEvent.setup();
    renderWithProviders(<HostLabelsEditor host={host} canEdit />);
    const view = screen.getByRole('region', { name: 'Instance labels of bench-a' });
    expect(view).toHaveTextContent('Provideraws');
    expect(view).toHaveTextContent('Regionnot set');

    await user.click(screen.getByRole('button', { name: 'Edit labels of bench-a' }));
    const form = screen.getByRole('form', { name: 'Instance labels of bench-a' });
    expect(within(form).getByLabelText('Provider')).toHaveFocus();
    await user.clear(within(form).getByLabelText('Provider'));
    await user.type(within(form).getByLabelText('Provider'), 'gcp');
    await user.clear(within(form).getByLabelText('Instance type'));
    await user.type(within(form).getByLabelText('Region'), ' europe-west4 ');
    await user.click(within(form).getByRole('button', { name: 'Save labels' }));

    const req = fetchMock.mock.calls[0]?.[0] as Request;
    expect(req.method).toBe('PATCH');
    expect(new URL(req.url).pathname).toBe('/api/hosts/1/labels');
    expect(await req.json()).toEqual({ provider: 'gcp', instance_type: null, region: 'europe-west4' });
    // Saved: the form closes; the card shows the host the server returned (via the hosts cache).
    expect(await screen.findByRole('region', { name: 'Instance labels of bench-a' })).toBeInTheDocument();
    expect(screen.queryByRole('form')).not.toBeInTheDocument();
  });

  it('cancels with Escape and shows a 422 next to its field', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => jsonResponse({ detail: [{ loc: ['body', 'region'], msg: 'String should have at most 64 characters', type: 'x' }] }, 422)));
    const user = userEvent.setup();
    renderWithProviders(<HostLabelsEditor host={host} canEdit />);
    await user.click(screen.getByRole('button', { name: 'Edit labels of bench-a' }));
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('form')).not.toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Edit labels of bench-a' }));
    await user.type(screen.getByLabelText('Region'), 'r');
    await user.click(screen.getByRole('button', { name: 'Save labels' }));
    expect(await screen.findByText('String should have at most 64 characters')).toBeInTheDocument();
    expect(screen.getByLabelText('Region')).toHaveAccessibleDescription('String should have at most 64 characters');
  });

  it('refuses a label over 64 characters before sending it', async () => {
    const fetchMock = vi.fn();
    vi.stubGlobal('fetch', fetchMock);
    const user = userEvent.setup();
    renderWithProviders(<HostLabelsEditor host={host} canEdit />);
    await user.click(screen.getByRole('button', { name: 'Edit labels of bench-a' }));
    await user.type(screen.getByLabelText('Region'), 'x'.repeat(65));
    await user.click(screen.getByRole('button', { name: 'Save labels' }));
    expect(screen.getByLabelText('Region')).toHaveAccessibleDescription('At most 64 characters');
    expect(fetchMock).not.toHaveBeenCalled();
  });
});
