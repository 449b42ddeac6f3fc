import { screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cpuExperiment } from '../../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../../test/render';
import type { Suite } from '../api/suites';
import { SuitesView } from './SuitesView';

const suite: Suite = {
  id: 'full', title: 'Full system report', description: '', builtin: true, created_by: null,
  items: [{ experiment: 'cpu', params: { op: ['fp64'], reference: true }, needs: null }],
  expected_duration_one_host_s: 1264,
};

afterEach(() => vi.unstubAllGlobals());

describe('SuitesView: the server estimate on the hosts picked', () => {
  it('shows what the suite usually takes there, its reference tools included, and the cap apart', async () => {
    const fetchMock = vi.fn(async (req: Request) =>
      req.url.endsWith('/api/suite-runs/estimate') ? jsonResponse({ typical_s: 4140, cap_s: 17430, per_host: { 1: 4140 } }) : jsonResponse({}),
    );
    vi.stubGlobal('fetch', fetchMock);
    renderWithProviders(
      <SuitesView
        suites={[suite]} experiments={[cpuExperiment]} hosts={[{ id: 1, name: 'vm', online: true, hasGpu: false }]}
        canOperate={false} canEdit={() => false} onStarted={vi.fn()} onCopy={vi.fn()} onEdit={vi.fn()}
      />,
    );
    // the one model's figure for the host picked (no flat allowance per reference item), the cap apart
    await waitFor(() => expect(screen.getByText(/For the host picked/)).toHaveTextContent('For the host picked: about 1 h 9 min'));
    expect(screen.getByText(/For the host picked/)).toHaveTextContent('cap 4 h 50 min');
    expect(screen.getByText(/Cap on one host/)).toHaveTextContent('Cap on one host: ≈ 21 min 4 s');
    const sent = fetchMock.mock.calls.map((c) => c[0] as Request).find((r) => r.url.endsWith('/api/suite-runs/estimate'));
    expect(await sent?.clone().json()).toEqual({ suite: 'full', host_ids: [1], peer_host_id: null });
  });

  it('says the server could not estimate rather than showing an allowance figure', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => jsonResponse({ detail: 'no such suite' }, 404)));
    renderWithProviders(
      <SuitesView
        suites={[suite]} experiments={[cpuExperiment]} hosts={[{ id: 1, name: 'vm', online: true, hasGpu: false }]}
        canOperate={false} canEdit={() => false} onStarted={vi.fn()} onCopy={vi.fn()} onEdit={vi.fn()}
      />,
    );
    await waitFor(() => expect(screen.getByText(/For the host picked/)).toHaveTextContent('the server could not estimate it'));
  });
});
