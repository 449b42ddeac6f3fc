import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registrationToken } from '../../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../../test/render';
import { AddHosts, parseLabels } from './AddHosts';

afterEach(() => vi.unstubAllGlobals());

const fleetToken = {
  ...registrationToken,
  info: { ...registrationToken.info, name: 'rack 12', max_uses: 60, uses_left: 60, labels: { rack: '12', role: 'db' } },
};

describe('AddHosts', () => {
  it('makes a token for a fleet (count, expiry, labels, name) and shows every way in', async () => {
    const fetchMock = vi.fn(async (_req: Request) => jsonResponse(fleetToken, 201));
    vi.stubGlobal('fetch', fetchMock);
    const user = userEvent.setup();
    renderWithProviders(<AddHosts />);
    await user.click(screen.getByRole('button', { name: 'Add hosts' }));
    const dialog = screen.getByRole('dialog', { name: 'Add hosts: one token for a fleet' });
    expect(fetchMock).not.toHaveBeenCalled(); // nothing is made before it is asked for
    await user.type(within(dialog).getByLabelText('Name'), 'rack 12');
    await user.clear(within(dialog).getByLabelText('Hosts that may join'));
    await user.type(within(dialog).getByLabelText('Hosts that may join'), '60');
    await user.selectOptions(within(dialog).getByLabelText('Valid for'), '7 days');
    await user.type(within(dialog).getByLabelText('Labels for every host that joins'), 'rack=12, role=db');
    await user.click(within(dialog).getByRole('button', { name: 'Make the token' }));
    const req = fetchMock.mock.calls[0]?.[0] as Request;
    expect(new URL(req.url).pathname).toBe('/api/hosts/registration-tokens');
    expect(await req.json()).toEqual({ ttl_s: 7 * 86400, uses: 60, name: 'rack 12', labels: { rack: '12', role: 'db' } });

    expect(await within(dialog).findByRole('note')).toHaveTextContent('This token enrols up to 60 hosts until');
    expect(within(dialog).getByRole('note')).toHaveTextContent('each labelled rack: 12, role: db');
    expect(within(dialog).getByTestId('fleet-shell_command')).toHaveTextContent(fleetToken.shell_command);
    for (const [tab, key] of [['cloud-init', 'cloud_init'], ['Container', 'container_command'], ['Kubernetes DaemonSet', 'kubernetes_manifest']] as const) {
      await user.click(within(dialog).getByRole('tab', { name: tab }));
      expect(within(dialog).getByRole('tab', { name: tab })).toHaveAttribute('aria-selected', 'true');
      expect(within(dialog).getByTestId(`fleet-${key}`).textContent).toBe(fleetToken[key]);
    }
  });

  it('sends null for any number of hosts, and refuses a label without =', async () => {
    const fetchMock = vi.fn(async (_req: Request) => jsonResponse({ ...fleetToken, info: { ...fleetToken.info, max_uses: null } }, 201));
    vi.stubGlobal('fetch', fetchMock);
    const user = userEvent.setup();
    renderWithProviders(<AddHosts />);
    await user.click(screen.getByRole('button', { name: 'Add hosts' }));
    await user.type(screen.getByLabelText('Labels for every host that joins'), 'rack');
    expect(screen.getByText('“rack” is not key=value')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Make the token' })).toBeDisabled();
    await user.clear(screen.getByLabelText('Labels for every host that joins'));
    await user.click(screen.getByLabelText(/Any number/));
    await user.click(screen.getByRole('button', { name: 'Make the token' }));
    expect(await (fetchMock.mock.calls[0]?.[0] as Request).json()).toEqual({ ttl_s: 86400, uses: null, labels: {} });
    expect(await screen.findByRole('note')).toHaveTextContent('This token enrols any number of hosts');
  });

  it('reads labels as key=value pairs', () => {
    expect(parseLabels(' a=1 , b = x=y ,')).toEqual({ labels: { a: '1', b: 'x=y' }, error: null });
    expect(parseLabels('=1').error).toBe('“=1” is not key=value');
  });
});
