import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cpuExperiment, cpuTraceExperiment, host, run } from '../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../test/render';
import { HistoryRoute } from './HistoryRoute';

afterEach(() => vi.unstubAllGlobals());

function serve(total = 2) {
  const fetchMock = vi.fn(async (req: Request) => {
    const url = new URL(req.url);
    if (url.pathname === '/api/hosts') return jsonResponse({ data: [host], count: 1 });
    if (url.pathname === '/api/experiments') return jsonResponse({ data: [cpuExperiment, cpuTraceExperiment] });
    if (url.pathname === '/api/runs') return jsonResponse({ data: [run({ id: 11 }), run({ id: 10 })].slice(0, total), count: total });
    return jsonResponse({ detail: 'nope' }, 404);
  });
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

const runsQueries = (fetchMock: ReturnType<typeof serve>) =>
  fetchMock.mock.calls.map(([r]) => new URL((r as Request).url)).filter((u) => u.pathname === '/api/runs').map((u) => Object.fromEntries(u.searchParams));

describe('HistoryRoute', () => {
  it('asks the server for the page and filters the URL holds', async () => {
    const fetchMock = serve();
    renderWithProviders(<HistoryRoute />, { route: '/history?experiment=cpu_trace&instance_type=c7i.large&page=1' });
    expect(await screen.findByRole('link', { name: '#11' })).toBeInTheDocument();
    expect(runsQueries(fetchMock)[0]).toEqual({ limit: '25', offset: '25', experiment: 'cpu_trace', instance_type: 'c7i.large' });
    expect(screen.getByLabelText('Experiment')).toHaveValue('cpu_trace');
    expect(screen.getByLabelText('Instance type')).toHaveValue('c7i.large');
  });

  it('links ticked runs to Compare with the first as baseline', async () => {
    serve();
    const user = userEvent.setup();
    renderWithProviders(<HistoryRoute />, { route: '/history' });
    await user.click(await screen.findByRole('checkbox', { name: 'Select run #10 to compare' }));
    expect(screen.getByRole('button', { name: 'Compare selected (1)' })).toBeDisabled();
    await user.click(screen.getByRole('checkbox', { name: 'Select run #11 to compare' }));
    expect(screen.getByRole('link', { name: 'Compare selected (2)' })).toHaveAttribute('href', '/compare?runs=10,11&baseline=10');
  });

  it('says when no run matches the filters', async () => {
    serve(0);
    renderWithProviders(<HistoryRoute />, { route: '/history?status=failed' });
    expect(await screen.findByText('No run matches these filters.')).toBeInTheDocument();
  });
});
